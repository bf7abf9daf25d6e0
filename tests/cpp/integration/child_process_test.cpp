// ChildProcess against real processes (spec kernel.md §2.11): exit codes,
// the group kill ladder, reaping that ends the rest of the group, and a
// destructor that leaves neither zombie nor orphan.
#include "proc/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <thread>

#include "support/proc_helpers.h"

namespace o4s::proc {
namespace {

using namespace o4s::testing;
using Clock = std::chrono::steady_clock;

struct Spawned {
  SpawnedPipes pipes;
  std::unique_ptr<ChildProcess> child;
};

Spawned start(std::vector<std::string> args) {
  auto pipes = spawn_with_pipes(probe_request(std::move(args)));
  if (!pipes) std::abort();
  auto child = adopt(pipes->pid);
  return Spawned{std::move(pipes.value()), std::move(child)};
}

pid_t read_pid(const Spawned& s) {
  auto line = read_line_with_timeout(s.pipes.stdout_read.get(), 10s);
  return line ? static_cast<pid_t>(std::stol(*line)) : -1;
}

// Reaped by us: the pid is no longer our child.
bool reaped(pid_t pid) {
  int status;
  return ::waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD;
}

TEST(ChildProcessTest, ReportsTheExitCode) {
  auto s = start({"exit", "3"});
  EXPECT_EQ(s.child->wait(std::nullopt), std::optional<int>(3));
  EXPECT_EQ(s.child->poll(), std::optional<int>(3));  // stable once reaped
  EXPECT_TRUE(reaped(s.pipes.pid));
}

TEST(ChildProcessTest, ReportsASignalAsItsNegative) {
  auto s = start({"pause"});
  ASSERT_TRUE(s.child->send_signal(SIGTERM).ok());
  EXPECT_EQ(s.child->wait(10'000ms), std::optional<int>(-SIGTERM));
}

TEST(ChildProcessTest, WaitTimesOutWhileRunning) {
  auto s = start({"wait-stdin"});
  EXPECT_EQ(s.child->wait(20ms), std::nullopt);
  EXPECT_EQ(s.child->poll(), std::nullopt);
  EXPECT_FALSE(s.child->exited());
  s.pipes.stdin_write.reset();
  EXPECT_EQ(s.child->wait(10'000ms), std::optional<int>(0));
}

TEST(ChildProcessTest, WaitExitDoesNotReap) {
  // Until reaped, the pid (and with it the group id) stays reserved.
  auto s = start({"exit", "0"});
  ASSERT_TRUE(s.child->wait_exit(10'000ms));
  EXPECT_TRUE(s.child->exited());
  EXPECT_EQ(process_state(s.pipes.pid), std::optional<char>('Z'));
  EXPECT_EQ(s.child->poll(), std::optional<int>(0));
  EXPECT_TRUE(reaped(s.pipes.pid));
}

TEST(ChildProcessTest, SignalAfterExitIsNotAlive) {
  auto s = start({"exit", "0"});
  ASSERT_EQ(s.child->wait(10'000ms), std::optional<int>(0));
  Status sent = s.child->send_signal(SIGTERM);
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().code, ErrorCode::kNotAlive);
}

TEST(ChildProcessTest, KillGroupKillsAGrandchildWithinTwoSeconds) {
  auto s = start({"grandchild"});
  const pid_t grandchild = read_pid(s);
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(::getpgid(grandchild), s.pipes.pid);  // same group as the leader
  ASSERT_TRUE(process_running(grandchild));

  const auto begin = Clock::now();
  auto killing = std::async(std::launch::async, [&] { s.child->kill_group(); });
  const bool died = wait_until([&] { return !process_running(grandchild); }, 2000ms);
  const auto elapsed = Clock::now() - begin;
  killing.get();
  EXPECT_TRUE(died) << "grandchild still running after the group kill";
  EXPECT_LT(elapsed, 2000ms);
  // The leader was reaped along the way.
  EXPECT_EQ(s.child->poll(), std::optional<int>(-SIGKILL));
  EXPECT_TRUE(reaped(s.pipes.pid));
}

TEST(ChildProcessTest, ReapingKillsWhatIsLeftOfTheGroup) {
  // The leader exits on its own and leaves a grandchild running in its
  // group, as a cell's background process would.
  auto s = start({"grandchild", "exit"});
  const pid_t grandchild = read_pid(s);
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(s.child->wait_exit(10'000ms));
  ASSERT_TRUE(process_running(grandchild));
  EXPECT_EQ(s.child->poll(), std::optional<int>(0));
  EXPECT_TRUE(wait_until([&] { return !process_running(grandchild); }, 2000ms));
}

TEST(ChildProcessTest, DestructorLeavesNoZombieAndNoOrphan) {
  auto s = start({"grandchild"});
  const pid_t leader = s.pipes.pid;
  const pid_t grandchild = read_pid(s);
  ASSERT_GT(grandchild, 0);
  s.child.reset();
  EXPECT_TRUE(reaped(leader)) << "leader left unreaped";
  EXPECT_EQ(process_state(leader), std::nullopt) << "leader left as a zombie";
  EXPECT_TRUE(wait_until([&] { return !process_running(grandchild); }, 2000ms))
      << "grandchild left running";
}

TEST(ChildProcessTest, DestructorReapsAnExitedChild) {
  auto s = start({"exit", "0"});
  const pid_t pid = s.pipes.pid;
  ASSERT_TRUE(s.child->wait_exit(10'000ms));
  s.child.reset();
  EXPECT_TRUE(reaped(pid));
  EXPECT_EQ(process_state(pid), std::nullopt);
}

TEST(ChildProcessTest, GroupIdIsThePidRecordedAtSpawn) {
  auto s = start({"exit", "0"});
  EXPECT_EQ(s.child->pgid(), s.pipes.pid);
  EXPECT_EQ(s.child->pid(), s.pipes.pid);
  EXPECT_EQ(s.child->wait(10'000ms), std::optional<int>(0));
  // Still known after reaping, when a lookup would fail.
  EXPECT_EQ(s.child->pgid(), s.pipes.pid);
}

}  // namespace
}  // namespace o4s::proc
