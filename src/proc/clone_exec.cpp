#include "proc/clone_exec.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
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

// The kernel's struct sigaction for rt_sigaction(2) (x86-64 and arm64 lay
// it out alike: handler, flags, restorer, an 8-byte mask).
struct KernelSigaction {
  void (*handler)(int) = SIG_DFL;
  unsigned long flags = 0;
  void (*restorer)() = nullptr;
  std::uint64_t mask = 0;
};
constexpr unsigned long kSigInfo = SA_SIGINFO;

[[noreturn]] void fail(SharedState* shared, const char* step, int error) {
  shared->error_number = error;
  shared->failed_step = step;
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// One raw system call; a failure ends the child, naming the step. syscall(2)
// sets errno on the parent thread's TLS (the child runs on it), read at once.
template <typename... Args>
void call_or_fail(SharedState* shared, const char* step, long number, Args... args) {
  if (::syscall(number, args...) < 0) fail(shared, step, errno);
}

// A handler the parent installed would run here on the parent's memory;
// reset each one (and the asked-for ignored ones) before signals come in.
void reset_signal_dispositions(const sigset_t& to_default) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    KernelSigaction current;
    if (::syscall(SYS_rt_sigaction, sig, nullptr, &current, sizeof current.mask) != 0) continue;
    const bool handled = (current.flags & kSigInfo) != 0 ||
                         (current.handler != SIG_DFL && current.handler != SIG_IGN);
    if (!handled && !sigismember(&to_default, sig)) continue;
    KernelSigaction by_default;
    ::syscall(SYS_rt_sigaction, sig, &by_default, nullptr, sizeof by_default.mask);
  }
}

}  // namespace

bool close_listed_fds_from(unsigned first) {
  const long dir =
      ::syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  // The kernel's linux_dirent64: u64 inode, s64 offset, u16 record length,
  // u8 type, then the name. Fields are copied out, never cast to.
  constexpr long kLengthAt = 16;
  constexpr long kNameAt = 19;
  alignas(8) char buffer[4096];
  bool listed = true;
  // Closing shifts what a listing in progress shows: list again from the
  // start until a whole pass closes nothing (as glibc's closefrom does).
  bool closed_any = true;
  for (bool first_pass = true; closed_any && listed; first_pass = false) {
    closed_any = false;
    if (!first_pass && ::syscall(SYS_lseek, dir, 0, SEEK_SET) < 0) {
      listed = false;
      break;
    }
    for (;;) {
      const long got = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer);
      if (got < 0) listed = false;
      if (got <= 0) break;
      for (long at = 0; at + kNameAt < got;) {
        unsigned short length = 0;
        __builtin_memcpy(&length, buffer + at + kLengthAt, sizeof length);
        if (length == 0) break;
        const char* digit = buffer + at + kNameAt;
        at += length;
        if (*digit < '0' || *digit > '9') continue;  // "." and ".."
        long fd = 0;
        for (; *digit >= '0' && *digit <= '9'; ++digit) fd = fd * 10 + (*digit - '0');
        if (fd < static_cast<long>(first) || fd == dir) continue;
        ::syscall(SYS_close, fd);
        closed_any = true;
      }
    }
  }
  ::syscall(SYS_close, dir);
  // A listing that failed part way: the caller closes by number instead.
  return listed;
}

namespace {

// Closes every descriptor from `first` up.
void close_every_fd_from(unsigned first) {
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
  // Kernels before 5.9: the descriptors /proc lists, else one by one up to
  // the descriptor limit (which may be a million).
  if (close_listed_fds_from(first)) return;
  struct rlimit nofile {};
  if (::syscall(SYS_getrlimit, RLIMIT_NOFILE, &nofile) != 0) nofile.rlim_cur = 1024;
  for (rlim_t fd = first; fd < nofile.rlim_cur; ++fd) ::syscall(SYS_close, static_cast<int>(fd));
}

// The capget/capset header and data, version 3 (two 32-bit words per set).
struct CapabilityHeader {
  std::uint32_t version = 0x20080522;  // _LINUX_CAPABILITY_VERSION_3
  int pid = 0;
};
struct CapabilityWords {
  std::uint32_t effective = 0, permitted = 0, inheritable = 0;
};

// Empties the effective, permitted and inheritable sets (lowering them is
// always allowed), then says whether any capability is left: securebits a
// parent set (SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS) keep the permitted
// set across the id switch, and the inheritable set survives it anyway.
bool capabilities_remain() {
  CapabilityHeader header;
  CapabilityWords none[2];
  ::syscall(SYS_capset, &header, none);
  CapabilityWords held[2];
  CapabilityHeader asked;
  if (::syscall(SYS_capget, &asked, held) != 0) return true;  // cannot tell: refuse
  std::uint32_t any = 0;
  for (const auto& word : held) any |= word.effective | word.permitted | word.inheritable;
  return any != 0;
}

int child_main(void* arg) {
  auto* shared = static_cast<SharedState*>(arg);
  const ChildPlan& plan = *shared->plan;
  reset_signal_dispositions(plan.default_signals);
  call_or_fail(shared, "setsid", SYS_setsid);
  if (plan.subreaper) {
    call_or_fail(shared, "prctl(PR_SET_CHILD_SUBREAPER)", SYS_prctl, PR_SET_CHILD_SUBREAPER, 1L, 0L,
                 0L, 0L);
  }
  for (const auto& [from, to] : plan.dups) {
    if (from == to) {
      long flags = ::syscall(SYS_fcntl, from, F_GETFD);
      if (flags < 0) fail(shared, "fcntl", errno);
      call_or_fail(shared, "fcntl", SYS_fcntl, from, F_SETFD, flags & ~FD_CLOEXEC);
    } else {
      call_or_fail(shared, "dup2", SYS_dup3, from, to, 0);
    }
  }
  for (int fd : plan.closes) ::syscall(SYS_close, fd);
  close_every_fd_from(static_cast<unsigned>(plan.close_from));
  for (const ChildLimit& limit : plan.limits) {
    struct rlimit value {
      static_cast<rlim_t>(limit.value), static_cast<rlim_t>(limit.value)
    };
    call_or_fail(shared, "setrlimit", SYS_prlimit64, 0, limit.resource, &value, nullptr);
  }
  if (plan.credentials != nullptr) {
    const auto uid = plan.credentials->uid;
    const auto gid = plan.credentials->gid;
    // Ambient capabilities would survive into bubblewrap; kernels before
    // 4.3 have none (EINVAL), which is as good.
    ::syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    call_or_fail(shared, "setgroups", SYS_setgroups, 0, nullptr);
    call_or_fail(shared, "setresgid", SYS_setresgid, gid, gid, gid);
    call_or_fail(shared, "setresuid", SYS_setresuid, uid, uid, uid);
    if (plan.credentials->uid != 0 && capabilities_remain()) {
      fail(shared, "drop capabilities", EPERM);
    }
  }
  // After the id switch: the directory is entered with the sandbox uid's
  // rights, not root's.
  if (plan.cwd != nullptr) call_or_fail(shared, "chdir", SYS_chdir, plan.cwd);
  const std::uint64_t empty_mask = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty_mask, nullptr, sizeof empty_mask);
  ::syscall(SYS_execve, plan.program, plan.argv, plan.envp);
  fail(shared, "exec", errno);
}

}  // namespace

Result<pid_t> clone_exec(const ChildPlan& plan) {
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return system_error("mmap (spawn stack)", errno);
  ScopeExit unmap([&] { ::munmap(stack, kChildStackBytes); });

  SharedState shared;
  shared.plan = &plan;
  const int dumpable = ::prctl(PR_GET_DUMPABLE);
  // Nothing may be delivered to the child before its handlers are reset.
  // Raw, so glibc's own signals (SIGCANCEL, SIGSETXID), which
  // pthread_sigmask leaves open, are blocked too, as in glibc's spawn.
  const std::uint64_t all = ~std::uint64_t{0};
  std::uint64_t previous = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &previous, sizeof all);
  pid_t pid = ::clone(child_main, static_cast<char*>(stack) + kChildStackBytes,
                      CLONE_VM | CLONE_VFORK | SIGCHLD, &shared);
  const int clone_errno = errno;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &previous, nullptr, sizeof previous);
  // The child's id switch reset the shared memory's dumpable flag (see the
  // header): the daemon keeps its own, for core dumps and /proc access.
  if (dumpable >= 0 && ::prctl(PR_GET_DUMPABLE) != dumpable) {
    (void)::prctl(PR_SET_DUMPABLE, dumpable);
  }
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
