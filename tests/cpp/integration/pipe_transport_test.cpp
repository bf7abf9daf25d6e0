// PipeTransport against real processes (spec kernel.md §2.9-§2.12): protocol
// pipes, kill() as the way to wake a blocked reader, and the graceful close
// ladder (shutdown frame, 3 s; SIGINT, 2 s; group kill).
#include "kernel/pipe_transport.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <future>
#include <thread>

#include "support/proc_helpers.h"

namespace o4s::kernel {
namespace {

using namespace o4s::testing;
using Clock = std::chrono::steady_clock;

std::unique_ptr<PipeTransport> start(std::vector<std::string> args) {
  auto transport = PipeTransport::start(probe_request(std::move(args)));
  if (!transport) {
    ADD_FAILURE() << transport.error().message;
    return nullptr;
  }
  return std::move(transport.value());
}

bool tail_contains(PipeTransport& t, const std::string& text) {
  return wait_until([&] { return t.tail()->text().find(text) != std::string::npos; }, 10'000ms);
}

TEST(PipeTransportTest, WritesFramesAndClosesGracefullyOnShutdown) {
  auto t = start({"shutdown-aware"});
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->alive());
  EXPECT_EQ(t->local_pid(), std::optional<pid_t>(t->child().pid()));
  EXPECT_FALSE(t->interrupt());  // signals are the manager's job
  ASSERT_TRUE(t->write_line("{\"type\":\"hello\"}\n").ok());
  ASSERT_TRUE(tail_contains(*t, "read: {\"type\":\"hello\"}\n"));

  const auto begin = Clock::now();
  ASSERT_TRUE(t->close(true).ok());
  EXPECT_LT(Clock::now() - begin, 2s) << "a worker that reads shutdown needs no signal";
  EXPECT_FALSE(t->alive());
  EXPECT_EQ(t->child().poll(), std::optional<int>(0));
  EXPECT_TRUE(tail_contains(*t, "read: {\"type\":\"shutdown\"}\n"));
  // Input is closed after close().
  Status late = t->write_line("{}\n");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kNotAlive);
}

TEST(PipeTransportTest, ReadsLinesUntilEndOfStream) {
  auto t = start({"stderr-flood", "5"});
  ASSERT_NE(t, nullptr);
  auto line = t->read_line();
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line.value(), std::optional<std::string>("done\n"));
  auto end = t->read_line();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end.value(), std::nullopt);
  EXPECT_EQ(t->dropped_lines(), 0U);
  EXPECT_EQ(t->child().wait(10'000ms), std::optional<int>(0));
  ASSERT_TRUE(wait_until([&] { return t->stderr_snapshot()->closed; }, 10'000ms));
  auto snapshot = t->stderr_snapshot();
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->text, "!\"#$%");  // the probe's first five flood bytes
  EXPECT_EQ(snapshot->seen, 5U);
  EXPECT_EQ(snapshot->retained, 5U);
  EXPECT_EQ(snapshot->dropped, 0U);
}

TEST(PipeTransportTest, KillWakesABlockedReader) {
  auto t = start({"pause"});
  ASSERT_NE(t, nullptr);
  auto reading = std::async(std::launch::async, [&t] { return t->read_line(); });
  // The reader is blocked in read(2): no line will ever come.
  ASSERT_EQ(reading.wait_for(100ms), std::future_status::timeout);
  t->kill();
  ASSERT_EQ(reading.wait_for(5s), std::future_status::ready);
  auto line = reading.get();
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line.value(), std::nullopt);
  EXPECT_FALSE(t->alive());
  EXPECT_EQ(t->child().poll(), std::optional<int>(-SIGKILL));
}

TEST(PipeTransportTest, WriteToAnExitedWorkerFailsWithEpipe) {
  auto t = start({"exit", "0"});
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->child().wait_exit(10'000ms));
  Status sent = t->write_line("{\"type\":\"execute\"}\n");
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().sys_errno, EPIPE);
}

TEST(PipeTransportTest, NonGracefulCloseDoesNotSignal) {
  auto t = start({"wait-stdin"});
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->close(false).ok());
  // Closing the input ends the child on its own terms: exit 0, no signal.
  EXPECT_EQ(t->child().wait(10'000ms), std::optional<int>(0));
}

TEST(PipeTransportTest, GracefulCloseIgnoredShutdownEndsBySigint) {
  // The child never reads its input (a worker busy in a cell), SIGINT default.
  auto t = start({"pause"});
  ASSERT_NE(t, nullptr);
  const auto begin = Clock::now();
  ASSERT_TRUE(t->close(true).ok());
  const auto elapsed = Clock::now() - begin;
  EXPECT_EQ(t->child().poll(), std::optional<int>(-SIGINT));
  // The waits are poll(2) timeouts in whole milliseconds, so allow a little
  // slack below the nominal 3 s (and 5 s below).
  EXPECT_GE(elapsed, 2900ms) << "SIGINT came before the 3 s shutdown grace";
  EXPECT_LT(elapsed, 5s);
}

TEST(PipeTransportTest, GracefulCloseLadderEndsInAGroupKill) {
  // Ignores the shutdown frame and survives SIGINT; its grandchild shares
  // the group. Only the last rung ends them.
  auto t = start({"ignore-sigint"});
  ASSERT_NE(t, nullptr);
  auto line = t->read_line();
  ASSERT_TRUE(line.ok() && line.value().has_value());
  const pid_t grandchild = static_cast<pid_t>(std::stol(*line.value()));
  ASSERT_TRUE(process_running(grandchild));

  const auto begin = Clock::now();
  ASSERT_TRUE(t->close(true).ok());
  const auto elapsed = Clock::now() - begin;
  EXPECT_EQ(t->child().poll(), std::optional<int>(-SIGKILL));
  EXPECT_TRUE(tail_contains(*t, "got SIGINT")) << "the SIGINT rung was skipped";
  EXPECT_GE(elapsed, 4900ms);
  EXPECT_LT(elapsed, 10s);
  EXPECT_TRUE(wait_until([&] { return !process_running(grandchild); }, 2000ms));
}

TEST(PipeTransportTest, DestructionKillsAndReapsARunningWorker) {
  auto t = start({"grandchild"});
  ASSERT_NE(t, nullptr);
  auto line = t->read_line();
  ASSERT_TRUE(line.ok() && line.value().has_value());
  const pid_t grandchild = static_cast<pid_t>(std::stol(*line.value()));
  const pid_t leader = t->child().pid();
  t.reset();
  int status;
  EXPECT_EQ(::waitpid(leader, &status, WNOHANG), -1) << "leader left unreaped";
  EXPECT_TRUE(wait_until([&] { return !process_running(grandchild); }, 2000ms));
}

TEST(PipeTransportTest, StartFailureIsAnError) {
  proc::SpawnRequest request = probe_request({});
  request.argv = {"/nonexistent/o4s-worker"};
  auto t = PipeTransport::start(request);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().sys_errno, ENOENT);
}

}  // namespace
}  // namespace o4s::kernel
