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
#include <sys/socket.h>
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

// AF_VSOCK reaches the hypervisor from a VM whatever the network namespace;
// the families a cell needs keep working.
TEST(SeccompPolicyTest, OnlyTheSocketFamiliesACellNeedsCanBeCreated) {
  auto socket_errno = [](int family, int type) {
    static int chosen_family;
    static int chosen_type;
    chosen_family = family;
    chosen_type = type;
    return errno_under_policy([]() -> long {
      int fd = ::socket(chosen_family, chosen_type, 0);
      if (fd >= 0) ::close(fd);
      return fd < 0 ? -1 : 0;
    });
  };
  EXPECT_EQ(socket_errno(AF_VSOCK, SOCK_STREAM), EAFNOSUPPORT);
  EXPECT_EQ(socket_errno(AF_ALG, SOCK_SEQPACKET), EAFNOSUPPORT);
  EXPECT_EQ(socket_errno(AF_PACKET, SOCK_RAW), EAFNOSUPPORT);
  EXPECT_EQ(socket_errno(AF_BLUETOOTH, SOCK_STREAM), EAFNOSUPPORT);
  EXPECT_EQ(socket_errno(AF_MAX + 5, SOCK_STREAM), EAFNOSUPPORT);
  EXPECT_EQ(errno_under_policy(
                [] { return ::syscall(SYS_socket, 0x100000000L | AF_INET, SOCK_STREAM, 0); }),
            EAFNOSUPPORT)
      << "upper bits in the family register are refused, not ignored";
  EXPECT_EQ(socket_errno(AF_UNIX, SOCK_STREAM), 0);
  EXPECT_EQ(socket_errno(AF_INET, SOCK_STREAM), 0);
  EXPECT_EQ(socket_errno(AF_INET6, SOCK_DGRAM), 0);
  EXPECT_EQ(socket_errno(AF_NETLINK, SOCK_RAW), 0);
  EXPECT_EQ(errno_under_policy([]() -> long {
              int pair[2];
              if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return -1;
              ::close(pair[0]);
              ::close(pair[1]);
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace o4s::sandbox
