// ProcessSupervisor (spec kernel.md §2.2, §2.7): children are spawned on one
// long-lived thread, so they outlive the thread that asked; stderr is drained
// into a bounded tail so a noisy child never blocks.
#include "proc/supervisor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>

#include "base/pipe.h"
#include "proto/limits.h"
#include "support/proc_helpers.h"

namespace o4s::proc {
namespace {

using namespace o4s::testing;

std::unique_ptr<ChildProcess> own(SupervisedChild& child) {
  return std::make_unique<ChildProcess>(child.pid, std::move(child.pidfd));
}

TEST(SupervisorTest, CallerIsNotTheSupervisorThread) {
  EXPECT_FALSE(ProcessSupervisor::instance().on_supervisor_thread());
}

TEST(SupervisorTest, ChildOutlivesTheShortLivedThreadThatAskedForIt) {
  // The probe arms PR_SET_PDEATHSIG, which Linux ties to the thread that
  // forked it (as bubblewrap's --die-with-parent is). Spawned from the
  // caller's thread, it would be killed when that thread exits.
  std::optional<SupervisedChild> spawned;
  std::string armed;
  std::thread([&] {
    auto result = ProcessSupervisor::instance().spawn(probe_request({"pdeathsig"}), 4096);
    ASSERT_TRUE(result.ok()) << result.error().message;
    armed = read_line_with_timeout(result->stdout_read.get(), 10s).value_or("<none>");
    spawned.emplace(std::move(result.value()));
  }).join();
  ASSERT_TRUE(spawned.has_value());
  ASSERT_EQ(armed, "armed");
  auto child = own(*spawned);
  // The requesting thread is gone; the child must still be running.
  EXPECT_FALSE(child->wait_exit(300ms));
  spawned->stdin_write.reset();
  EXPECT_EQ(child->wait(10'000ms), std::optional<int>(0)) << "killed by the parent-death signal";
}

TEST(SupervisorTest, ControlChildSpawnedOnAShortLivedThreadDiesWithIt) {
  // Proves the probe above can fail: spawning directly from the short-lived
  // thread gets the child killed when the thread exits.
  std::optional<SpawnedPipes> spawned;
  std::string armed;
  std::thread([&] {
    auto result = spawn_with_pipes(probe_request({"pdeathsig"}));
    ASSERT_TRUE(result.ok()) << result.error().message;
    armed = read_line_with_timeout(result->stdout_read.get(), 10s).value_or("<none>");
    spawned.emplace(std::move(result.value()));
  }).join();
  ASSERT_TRUE(spawned.has_value());
  ASSERT_EQ(armed, "armed");
  auto child = adopt(spawned->pid);
  EXPECT_EQ(child->wait(10'000ms), std::optional<int>(-SIGKILL));
}

TEST(SupervisorTest, NoisyStderrNeverBlocksAndTheTailKeepsTheLast64KiB) {
  // 1 MB on stderr before the stdout line: undrained, the child would block
  // on a full 64 KiB pipe and never write the line.
  constexpr std::size_t kFlood = 1'000'000;
  auto spawned = ProcessSupervisor::instance().spawn(
      probe_request({"stderr-flood", std::to_string(kFlood)}), proto::kStderrTailBytes);
  ASSERT_TRUE(spawned.ok()) << spawned.error().message;
  auto child = own(spawned.value());
  EXPECT_EQ(read_line_with_timeout(spawned->stdout_read.get(), 20s),
            std::optional<std::string>("done"));
  EXPECT_EQ(child->wait(10'000ms), std::optional<int>(0));

  auto tail = spawned->stderr_tail;
  ASSERT_TRUE(wait_until([&] { return tail->closed(); }, 10'000ms));
  EXPECT_EQ(tail->seen_bytes(), kFlood);
  EXPECT_EQ(tail->retained_bytes(), proto::kStderrTailBytes);
  EXPECT_EQ(tail->dropped_bytes(), kFlood - proto::kStderrTailBytes);
  EXPECT_TRUE(tail->truncated());
  // The probe's byte i is '!' + (i % 251) % 90.
  std::string expected;
  for (std::size_t i = kFlood - proto::kStderrTailBytes; i < kFlood; ++i) {
    expected.push_back(static_cast<char>('!' + (i % 251) % 90));
  }
  EXPECT_TRUE(tail->text() == expected) << "the tail is not the stream's last 64 KiB";
}

TEST(SupervisorTest, TailClosesWhenTheChildExits) {
  auto spawned = ProcessSupervisor::instance().spawn(probe_request({"exit", "0"}), 1024);
  ASSERT_TRUE(spawned.ok());
  auto child = own(spawned.value());
  EXPECT_EQ(child->wait(10'000ms), std::optional<int>(0));
  EXPECT_TRUE(wait_until([&] { return spawned->stderr_tail->closed(); }, 10'000ms));
  EXPECT_EQ(spawned->stderr_tail->seen_bytes(), 0U);
}

TEST(SupervisorTest, ExecFailureIsAnError) {
  SpawnRequest request = probe_request({});
  request.argv = {"/nonexistent/o4s-worker"};
  auto spawned = ProcessSupervisor::instance().spawn(request, 1024);
  ASSERT_FALSE(spawned.ok());
  EXPECT_EQ(spawned.error().sys_errno, ENOENT);
}

TEST(SupervisorTest, SupervisedChildResetsSignalsTheHostIgnores) {
  // A backgrounded daemon runs with SIGINT and SIGQUIT ignored; R installs
  // its interrupt handler only when SIGINT is not ignored (spec §2.5).
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction saved_int {};
  struct sigaction saved_quit {};
  ::sigaction(SIGINT, &ignore, &saved_int);
  ::sigaction(SIGQUIT, &ignore, &saved_quit);
  auto spawned = ProcessSupervisor::instance().spawn(probe_request({"status"}), 1024);
  ::sigaction(SIGINT, &saved_int, nullptr);
  ::sigaction(SIGQUIT, &saved_quit, nullptr);
  ASSERT_TRUE(spawned.ok());
  auto child = own(spawned.value());
  std::string out = read_all_with_timeout(spawned->stdout_read.get(), 10s).value_or("");
  EXPECT_EQ(child->wait(10'000ms), std::optional<int>(0));
  auto ignored = status_mask(out, "SigIgn");
  ASSERT_TRUE(ignored.has_value()) << out;
  EXPECT_FALSE(mask_has(*ignored, SIGINT));
  EXPECT_FALSE(mask_has(*ignored, SIGQUIT));
  EXPECT_EQ(status_mask(out, "SigBlk"), std::optional<std::uint64_t>(0));
}

TEST(SupervisorTest, SupervisorDescriptorsDoNotLeakIntoChildren) {
  // Keep one child's stderr pipe registered with the supervisor's epoll set
  // while another child lists its fds: neither the epoll fd, the eventfd nor
  // the other child's pipes may appear.
  auto holder = ProcessSupervisor::instance().spawn(probe_request({"wait-stdin"}), 1024);
  ASSERT_TRUE(holder.ok());
  auto holder_child = own(holder.value());
  auto lister = ProcessSupervisor::instance().spawn(probe_request({"fds"}), 1024);
  ASSERT_TRUE(lister.ok());
  auto lister_child = own(lister.value());
  EXPECT_EQ(read_all_with_timeout(lister->stdout_read.get(), 10s),
            std::optional<std::string>("0 1 2 \n"));
  EXPECT_EQ(lister_child->wait(10'000ms), std::optional<int>(0));
  holder->stdin_write.reset();
  EXPECT_EQ(holder_child->wait(10'000ms), std::optional<int>(0));
}

TEST(SupervisorTest, ConcurrentSpawnsEachGetTheirOwnTail) {
  constexpr int kChildren = 8;
  std::vector<std::future<std::pair<std::size_t, std::size_t>>> results;
  for (int i = 0; i < kChildren; ++i) {
    results.push_back(std::async(std::launch::async, [i]() -> std::pair<std::size_t, std::size_t> {
      const std::size_t bytes = 1000 * static_cast<std::size_t>(i + 1);
      auto spawned = ProcessSupervisor::instance().spawn(
          probe_request({"stderr-flood", std::to_string(bytes)}), 1 << 20);
      if (!spawned) return {bytes, 0};
      auto child = own(spawned.value());
      child->wait(10'000ms);
      wait_until([&] { return spawned->stderr_tail->closed(); }, 10'000ms);
      return {bytes, spawned->stderr_tail->seen_bytes()};
    }));
  }
  for (auto& result : results) {
    auto [expected, seen] = result.get();
    EXPECT_EQ(seen, expected);
  }
}

// Records whether the supervisor ever ended the watch on its own.
class ClosedFlag final : public DrainTarget {
 public:
  void append(std::string_view) override {}
  void mark_closed() override { closed = true; }
  std::atomic<bool> closed{false};
};

void wait_for_supervisor_round() {
  std::promise<void> reached;
  auto future = reached.get_future();
  ProcessSupervisor::instance().post([&] { reached.set_value(); });
  future.wait();
}

TEST(SupervisorTest, AnEventForAnUnwatchedDescriptorNeverDrainsItsSuccessor) {
  // The R kernel's sink fifos: the host opens each cell's read end before the
  // writer exists, when read() says end of stream. An epoll event already
  // returned for the previous cell's descriptor, drained after unwatch() and
  // the reuse of its number, used to mark the new fifo closed, and R's
  // blocking open for writing then waited forever.
  auto& supervisor = ProcessSupervisor::instance();
  for (int round = 0; round < 20; ++round) {
    auto ends = make_pipe();
    ASSERT_TRUE(ends.ok());
    UniqueFd old_read = std::move(ends->read);
    UniqueFd old_write = std::move(ends->write);
    const int reused_number = old_read.get();
    std::uint64_t old_token = supervisor.watch(std::move(old_read), std::make_shared<ClosedFlag>());

    // With the thread held: a task (the wakeup) becomes ready, then the old
    // pipe's end of stream, so the next epoll_wait returns both, wakeup first.
    std::promise<void> second_released;
    std::promise<void> second_running;
    {
      std::promise<void> first_released;
      std::promise<void> first_running;
      supervisor.post([&] {
        first_running.set_value();
        first_released.get_future().wait();
      });
      first_running.get_future().wait();
      supervisor.post([&] {
        second_running.set_value();
        second_released.get_future().wait();
      });
      old_write.reset();
      first_released.set_value();
    }
    // The supervisor now holds the old pipe's event and sits in the second
    // task: end the watch, and give its number to a fifo with no writer yet.
    second_running.get_future().wait();
    UniqueFd returned = supervisor.unwatch(old_token);
    returned.reset();
    TempDir dir;
    std::string fifo = dir.path() + "/sink.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    UniqueFd fresh(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    ASSERT_TRUE(fresh);
    if (fresh.get() != reused_number) {  // another thread took the number
      second_released.set_value();
      continue;
    }
    auto flag = std::make_shared<ClosedFlag>();
    std::uint64_t fresh_token = supervisor.watch(std::move(fresh), flag);
    second_released.set_value();
    wait_for_supervisor_round();
    EXPECT_FALSE(flag->closed) << "round " << round;
    supervisor.unwatch(fresh_token);
  }
}

}  // namespace
}  // namespace o4s::proc
