// The compiled seccomp policy, loaded into a forked child (no bubblewrap
// needed): denied calls fail with EPERM (clone3 with ENOSYS), allowed ones
// still work, and the process survives every refusal.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/seccomp_policy.h"

namespace o4s::sandbox {
namespace {

// Runs `probe` in a child under the policy; its exit code is the errno it
// saw (0 for success), 200+ for a setup failure.
int errno_under_policy(long (*probe)()) {
  auto program = seccomp_program();
  if (!program.ok()) return 250;
  const std::string& bytes = *program.value();
  sock_fprog prog{static_cast<unsigned short>(bytes.size() / sizeof(sock_filter)),
                  reinterpret_cast<sock_filter*>(const_cast<char*>(bytes.data()))};
  pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls from here on.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(201);
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) ::_exit(202);
    errno = 0;
    long rc = probe();
    ::_exit(rc == -1 ? errno : 0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 300 + WTERMSIG(status);
}

TEST(SeccompPolicyTest, CompilesOnceToAWholeNumberOfInstructions) {
  auto first = seccomp_program();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first.value()->empty());
  EXPECT_EQ(first.value()->size() % sizeof(sock_filter), 0U);
  EXPECT_EQ(seccomp_program().value(), first.value()) << "compiled once per process";
  auto fd = seccomp_program_fd();
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  EXPECT_EQ(::lseek(fd->get(), 0, SEEK_CUR), 0);
  EXPECT_EQ(::write(fd->get(), "x", 1), -1) << "the program is sealed";
}

TEST(SeccompPolicyTest, DeniedCallsFailWithEpermAndTheProcessLives) {
  EXPECT_EQ(errno_under_policy([] { return ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }),
            EPERM);
  EXPECT_EQ(errno_under_policy([]() -> long { return ::unshare(CLONE_NEWUSER); }), EPERM);
  EXPECT_EQ(errno_under_policy([]() -> long { return ::unshare(CLONE_NEWNS); }), EPERM);
  EXPECT_EQ(errno_under_policy([] { return ::syscall(SYS_keyctl, 0, 0, 0, 0, 0); }), EPERM);
  EXPECT_EQ(errno_under_policy([] { return ::syscall(SYS_bpf, 0, nullptr, 0); }), EPERM);
  EXPECT_EQ(errno_under_policy([] { return ::syscall(SYS_setns, 0, 0); }), EPERM);
  EXPECT_EQ(errno_under_policy([]() -> long {
              char c = 'x';
              return ::ioctl(0, TIOCSTI, &c);
            }),
            EPERM);
}

TEST(SeccompPolicyTest, NamespaceCloneFlagsAreDeniedAndClone3DefersToClone) {
  EXPECT_EQ(errno_under_policy([] {
              return ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, 0);
            }),
            EPERM);
  EXPECT_EQ(errno_under_policy([] { return ::syscall(SYS_clone3, nullptr, 0); }), ENOSYS);
  // An ordinary fork still works (glibc falls back from clone3 to clone).
  EXPECT_EQ(errno_under_policy([]() -> long {
              pid_t child = ::fork();
              if (child == 0) ::_exit(0);
              if (child < 0) return -1;
              return ::waitpid(child, nullptr, 0) == child ? 0 : -1;
            }),
            0);
  EXPECT_EQ(errno_under_policy([]() -> long { return ::getpid() > 0 ? 0 : -1; }), 0);
}

}  // namespace
}  // namespace o4s::sandbox
