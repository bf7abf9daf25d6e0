// Signal helpers at the OS boundary (spec kernel.md §2.14): tgkill to a main
// thread, pidfd_open, pidfd_send_signal.
#include "proc/signals.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

#include "base/pipe.h"
#include "support/proc_helpers.h"

namespace o4s::proc {
namespace {

using namespace o4s::testing;

std::atomic<long> g_handler_tid{0};
int g_wake_fd = -1;

void on_usr1(int) {
  g_handler_tid.store(::syscall(SYS_gettid));
  char byte = 1;
  [[maybe_unused]] ssize_t n = ::write(g_wake_fd, &byte, 1);
}

TEST(SignalMainThreadTest, DeliversToTheMainThreadOfThisProcess) {
  // gtest runs test bodies on the main thread, whose tid is the pid.
  ASSERT_EQ(::syscall(SYS_gettid), ::getpid());
  auto wake = make_pipe();
  ASSERT_TRUE(wake.ok());
  g_wake_fd = wake->write.get();
  struct sigaction action {};
  struct sigaction saved {};
  action.sa_handler = on_usr1;
  ::sigemptyset(&action.sa_mask);
  ASSERT_EQ(::sigaction(SIGUSR1, &action, &saved), 0);

  // Sent from a helper thread that blocks SIGUSR1: a process-directed signal
  // could still land on any other thread, tgkill can only land on main.
  bool sent = false;
  std::thread([&sent] {
    sigset_t usr1;
    ::sigemptyset(&usr1);
    ::sigaddset(&usr1, SIGUSR1);
    ::pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    sent = signal_main_thread(::getpid(), SIGUSR1);
  }).join();

  pollfd p{wake->read.get(), POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, 5000);
  } while (ready < 0 && errno == EINTR);
  ::sigaction(SIGUSR1, &saved, nullptr);
  EXPECT_TRUE(sent);
  ASSERT_EQ(ready, 1) << "SIGUSR1 not handled within 5 s";
  EXPECT_EQ(g_handler_tid.load(), ::getpid());
}

TEST(SignalMainThreadTest, RefusesNonPositivePids) {
  EXPECT_FALSE(signal_main_thread(0, 0));
  EXPECT_FALSE(signal_main_thread(-1, 0));
}

TEST(SignalMainThreadTest, FailsForAProcessThatIsGone) {
  auto spawned = spawn_with_pipes(probe_request({"exit", "0"}));
  ASSERT_TRUE(spawned.ok());
  const pid_t pid = spawned->pid;
  ASSERT_EQ(adopt(pid)->wait(10'000ms), std::optional<int>(0));
  EXPECT_FALSE(signal_main_thread(pid, 0));
}

TEST(PidfdTest, OpenIsCloseOnExecAndSendSignalKills) {
  auto spawned = spawn_with_pipes(probe_request({"pause"}));
  ASSERT_TRUE(spawned.ok());
  const pid_t pid = spawned->pid;
  auto pidfd = open_pidfd(pid);
  ASSERT_TRUE(pidfd.ok()) << pidfd.error().message;
  EXPECT_TRUE(::fcntl(pidfd->get(), F_GETFD) & FD_CLOEXEC);
  ASSERT_TRUE(send_signal_via_pidfd(pidfd->get(), SIGTERM).ok());
  ChildProcess child(pid, std::move(pidfd.value()));
  EXPECT_EQ(child.wait(10'000ms), std::optional<int>(-SIGTERM));
}

TEST(PidfdTest, SendToAReapedChildFails) {
  auto spawned = spawn_with_pipes(probe_request({"exit", "0"}));
  ASSERT_TRUE(spawned.ok());
  auto pidfd = open_pidfd(spawned->pid);
  ASSERT_TRUE(pidfd.ok());
  const int raw = pidfd->get();
  ChildProcess child(spawned->pid, std::move(pidfd.value()));
  ASSERT_EQ(child.wait(10'000ms), std::optional<int>(0));
  // The pidfd pins the dead process: no recycled pid can be hit.
  Status sent = send_signal_via_pidfd(raw, SIGKILL);
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().sys_errno, ESRCH);
  EXPECT_EQ(sent.error().message, "pidfd_send_signal: ESRCH");
}

TEST(PidfdTest, OpenFailsForBadPids) {
  auto bad = open_pidfd(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().sys_errno, EINVAL);
  EXPECT_EQ(bad.error().message.rfind("pidfd_open: ", 0), 0U);
}

TEST(PidfdTest, SendOnABadFdFails) {
  Status sent = send_signal_via_pidfd(-1, 0);
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().sys_errno, EBADF);
}

}  // namespace
}  // namespace o4s::proc
