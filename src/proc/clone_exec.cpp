#include "proc/clone_exec.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/scope_exit.h"

namespace o4s::proc {

namespace {

// The child runs a few system calls on this stack; glibc's own spawn child
// uses about 32 KiB plus the argument vector, which the child only points
// into.
constexpr std::size_t kChildStackBytes = 256 * 1024;

// Written by the child, read by the parent once clone returns (CLONE_VFORK:
// the child has exec'd or exited by then).
struct SharedState {
  const ChildPlan* plan = nullptr;
  volatile int error_number = 0;
  const char* volatile failed_step = nullptr;
};

[[noreturn]] void fail(SharedState* shared, const char* step) {
  shared->error_number = errno;
  shared->failed_step = step;
  ::_exit(127);
}

// A handler the parent installed would run here on the parent's memory;
// reset each one (and the asked-for ignored ones) before signals come in.
void reset_signal_dispositions(const sigset_t& to_default) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) continue;  // glibc-internal signals
    const bool handled = (current.sa_flags & SA_SIGINFO) != 0 ||
                         (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
    if (!handled && !sigismember(&to_default, sig)) continue;
    struct sigaction by_default {};
    by_default.sa_handler = SIG_DFL;
    ::sigaction(sig, &by_default, nullptr);
  }
}

void close_every_fd_from(int first) {
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
  // Kernels before 5.9: close up to the descriptor limit.
  struct rlimit nofile {};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) != 0) nofile.rlim_cur = 1024;
  for (rlim_t fd = static_cast<rlim_t>(first); fd < nofile.rlim_cur; ++fd) {
    ::close(static_cast<int>(fd));
  }
}

int child_main(void* arg) {
  auto* shared = static_cast<SharedState*>(arg);
  const ChildPlan& plan = *shared->plan;
  reset_signal_dispositions(plan.default_signals);
  if (::setsid() < 0) fail(shared, "setsid");
  for (const auto& [from, to] : plan.dups) {
    if (from == to) {
      int flags = ::fcntl(from, F_GETFD);
      if (flags < 0 || ::fcntl(from, F_SETFD, flags & ~FD_CLOEXEC) != 0) fail(shared, "fcntl");
    } else if (::dup2(from, to) < 0) {
      fail(shared, "dup2");
    }
  }
  for (int fd : plan.closes) ::close(fd);
  if (plan.close_from >= 0) close_every_fd_from(plan.close_from);
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) fail(shared, "chdir");
  for (const ChildLimit& limit : plan.limits) {
    struct rlimit value {
      static_cast<rlim_t>(limit.value), static_cast<rlim_t>(limit.value)
    };
    if (::syscall(SYS_prlimit64, 0, limit.resource, &value, nullptr) != 0) {
      fail(shared, "setrlimit");
    }
  }
  if (plan.credentials != nullptr) {
    // Raw system calls: this task alone changes ids (see the header).
    const auto uid = plan.credentials->uid;
    const auto gid = plan.credentials->gid;
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) fail(shared, "setgroups");
    if (::syscall(SYS_setresgid, gid, gid, gid) != 0) fail(shared, "setresgid");
    if (::syscall(SYS_setresuid, uid, uid, uid) != 0) fail(shared, "setresuid");
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  ::execve(plan.program, plan.argv, plan.envp);
  fail(shared, "exec");
}

}  // namespace

Result<pid_t> clone_exec(const ChildPlan& plan) {
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return system_error("mmap (spawn stack)", errno);
  ScopeExit unmap([&] { ::munmap(stack, kChildStackBytes); });

  SharedState shared;
  shared.plan = &plan;
  // Nothing may be delivered to the child before its handlers are reset.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &previous);
  pid_t pid = ::clone(child_main, static_cast<char*>(stack) + kChildStackBytes,
                      CLONE_VM | CLONE_VFORK | SIGCHLD, &shared);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) return system_error("clone", clone_errno);
  if (shared.failed_step != nullptr) {
    const int child_errno = shared.error_number;
    const std::string step = shared.failed_step;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (step == "exec") return system_error(std::string("spawn ") + plan.program, child_errno);
    return system_error(std::string("spawn ") + plan.program + " (" + step + ")", child_errno);
  }
  return pid;
}

}  // namespace o4s::proc
