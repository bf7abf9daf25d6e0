#include "sandbox/seccomp_policy.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <iterator>
#include <mutex>

#include "base/file_io.h"
#include "base/scope_exit.h"

namespace o4s::sandbox {

namespace {

// Namespace-creating clone() flags. CLONE_NEWTIME is absent on purpose: its
// bit (0x80) lies in clone()'s exit-signal byte and only means "new time
// namespace" to clone3/unshare, which are denied whole.
constexpr std::uint64_t kNamespaceCloneFlags[] = {
    CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
};

// Terminal injection (CVE-2017-5226, the reason bwrap has --new-session) and
// the Linux console's equivalent. The worker keeps the spawn's session, so
// these are denied here instead.
constexpr std::uint64_t kDeniedIoctls[] = {TIOCSTI, TIOCLINUX};

// The socket families a cell keeps: local sockets, IPv4/IPv6 (loopback only
// unless raw network is allowed), and netlink, which glibc's getaddrinfo and
// if_nameindex use to list interfaces. Everything else -- AF_VSOCK first of
// all, which no network namespace isolates and which reaches the hypervisor
// on a VM, but also AF_ALG, AF_PACKET, Bluetooth, CAN, TIPC, RDS... -- is a
// kernel surface no scientific cell needs.
constexpr std::uint64_t kAllowedSocketFamilies[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
// Of netlink, only NETLINK_ROUTE (protocol 0): interface and address lists
// are all glibc asks it for. The others (audit, uevents, netfilter, generic
// families, socket diagnostics) are kernel interfaces of the host's
// administration, some not isolated by a network namespace.
constexpr std::uint64_t kNetlinkRoute = 0;
// One past the highest family to refuse by number; anything at or above it
// (future families, or garbage in the upper half of the register) is
// refused by a single range rule.
constexpr std::uint64_t kSocketFamilyCeiling = 64;

// The mode bits no file a cell makes may carry. Its host uid is shared by
// every sandbox of the daemon (nobody, for a root daemon) and is granted
// every workspace; a set-id file left in one would run as that uid, or its
// group, for any local user who executes it on the host, where the
// workspace is not mounted nosuid.
constexpr std::uint64_t kSetIdModeBits[] = {S_ISUID, S_ISGID};

// The calls that give a file its mode, and which argument holds it. Creating
// calls (open, openat, creat through O_CREAT or O_TMPFILE) are listed with
// their flags argument; the others set the mode whatever the flags.
// Calls newer than some libseccomp releases, by number when the name is
// unknown to it: the same on x86_64 and aarch64 (the generic table). A rule
// skipped for an unknown name would leave the call allowed.
constexpr int kFchmodat2Number = 452;
constexpr int kOpenat2Number = 437;
constexpr int kClone3Number = 435;
constexpr int kNoFallback = -1;

struct ModeArgument {
  const char* call;
  unsigned int mode_arg;
  int flags_arg;  // -1: no flags condition
  int fallback_number = kNoFallback;
};
constexpr ModeArgument kModeSetters[] = {
    {"chmod", 1, -1},    {"fchmod", 1, -1},
    {"fchmodat", 2, -1}, {"fchmodat2", 2, -1, kFchmodat2Number},
    {"mknod", 1, -1},    {"mknodat", 2, -1},
    {"creat", 1, -1},    {"open", 2, 1},
    {"openat", 3, 2},
};

int resolve_or(const char* name, int number) {
  int nr = seccomp_syscall_resolve_name(name);
  return nr < 0 ? number : nr;
}
// O_TMPFILE is __O_TMPFILE | O_DIRECTORY; the kernel makes a file only when
// both are set, so __O_TMPFILE's bit alone marks a creation (the fallback
// spells the kernel's bare bit).
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
constexpr std::uint64_t kCreationFlags[] = {O_CREAT, __O_TMPFILE};

std::uint32_t eperm() { return SCMP_ACT_ERRNO(EPERM); }

Error seccomp_error(const std::string& what, int rc) {
  // libseccomp returns negative errno values.
  return system_error("seccomp: " + what, -rc);
}

// EPERM for any call that would give a file a set-uid or set-gid bit. The
// mode is a umode_t and the flags an int: the kernel reads only the lower
// bits, which are the ones the masks test.
Status deny_set_id_modes(scmp_filter_ctx ctx) {
  for (const ModeArgument& setter : kModeSetters) {
    int nr = resolve_or(setter.call, setter.fallback_number);
    if (nr < 0) continue;  // not on this architecture (open, creat, mknod on aarch64)
    for (std::uint64_t bit : kSetIdModeBits) {
      scmp_arg_cmp mode{setter.mode_arg, SCMP_CMP_MASKED_EQ, bit, bit};
      if (setter.flags_arg < 0) {
        int rc = seccomp_rule_add_array(ctx, eperm(), nr, 1, &mode);
        if (rc != 0) return seccomp_error(std::string("deny set-id ") + setter.call, rc);
        continue;
      }
      for (std::uint64_t creation : kCreationFlags) {
        scmp_arg_cmp both[] = {
            {static_cast<unsigned int>(setter.flags_arg), SCMP_CMP_MASKED_EQ, creation, creation},
            mode};
        int rc = seccomp_rule_add_array(ctx, eperm(), nr, 2, both);
        if (rc != 0) return seccomp_error(std::string("deny set-id ") + setter.call, rc);
      }
    }
  }
  // openat2 carries its mode in a struct the filter cannot read: "not
  // implemented", so a caller falls back to openat, which is checked above.
  int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(ENOSYS),
                                  resolve_or("openat2", kOpenat2Number), 0, nullptr);
  if (rc != 0) return seccomp_error("deny openat2", rc);
  return {};
}

Status add_denials(scmp_filter_ctx ctx) {
  for (std::string_view name : denied_syscalls()) {
    int nr = seccomp_syscall_resolve_name(std::string(name).c_str());
    // A negative number is a syscall this architecture does not have (or a
    // libseccomp pseudo-number for one); nothing to deny.
    if (nr < 0) continue;
    int rc = seccomp_rule_add_array(ctx, eperm(), nr, 0, nullptr);
    if (rc != 0) return seccomp_error("deny " + std::string(name), rc);
  }
  // glibc (>= 2.34) tries clone3 first and falls back to clone on ENOSYS;
  // clone3 passes its flags in memory a filter cannot read, so it is refused
  // as "not implemented" and every thread or process goes through clone,
  // whose flags are checked below.
  {
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(ENOSYS),
                                    resolve_or("clone3", kClone3Number), 0, nullptr);
    if (rc != 0) return seccomp_error("deny clone3", rc);
  }
  // clone's flags are argument 0 on x86_64 and aarch64 (the architectures
  // this project builds for).
  int clone = seccomp_syscall_resolve_name("clone");
  for (std::uint64_t flag : kNamespaceCloneFlags) {
    scmp_arg_cmp cmp{0, SCMP_CMP_MASKED_EQ, flag, flag};
    int rc = seccomp_rule_add_array(ctx, eperm(), clone, 1, &cmp);
    if (rc != 0) return seccomp_error("deny clone namespace flag", rc);
  }
  // socket() and socketpair() take the family in argument 0, an int: the
  // kernel reads the lower half, so the equality rules mask it, and the
  // range rule catches every value with upper bits set.
  for (const char* call : {"socket", "socketpair"}) {
    int nr = seccomp_syscall_resolve_name(call);
    if (nr < 0) continue;
    for (std::uint64_t family = 0; family < kSocketFamilyCeiling; ++family) {
      if (std::find(std::begin(kAllowedSocketFamilies), std::end(kAllowedSocketFamilies), family) !=
          std::end(kAllowedSocketFamilies)) {
        continue;
      }
      scmp_arg_cmp cmp{0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, family};
      int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1, &cmp);
      if (rc != 0) return seccomp_error(std::string("deny ") + call + " family", rc);
    }
    scmp_arg_cmp above{0, SCMP_CMP_GE, kSocketFamilyCeiling, 0};
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1, &above);
    if (rc != 0) return seccomp_error(std::string("deny ") + call + " high family", rc);
    // The protocol is argument 2, an int; any register value but 0 is
    // refused (one with only upper bits set would have meant ROUTE: refusing
    // that odd spelling costs nothing).
    scmp_arg_cmp netlink[] = {{0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, AF_NETLINK},
                              {2, SCMP_CMP_GT, kNetlinkRoute, 0}};
    rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), nr, 2, netlink);
    if (rc != 0) return seccomp_error(std::string("deny ") + call + " netlink protocol", rc);
  }
  if (Status denied = deny_set_id_modes(ctx); !denied) return denied;
  // ioctl's request is an unsigned int: the kernel ignores the upper half of
  // the register, so the comparison must too.
  int ioctl = seccomp_syscall_resolve_name("ioctl");
  for (std::uint64_t request : kDeniedIoctls) {
    scmp_arg_cmp cmp{1, SCMP_CMP_MASKED_EQ, 0xffffffffULL, request};
    int rc = seccomp_rule_add_array(ctx, eperm(), ioctl, 1, &cmp);
    if (rc != 0) return seccomp_error("deny ioctl", rc);
  }
  return {};
}

Result<std::string> compile() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return make_error(ErrorCode::kSystem, "seccomp_init failed");
  ScopeExit release([&] { seccomp_release(ctx); });
  // A syscall made through another ABI (int 0x80 from a 64-bit process, or
  // x32) would bypass rules written for the native numbers: refuse them all.
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, eperm());
  if (rc != 0) return seccomp_error("bad-arch action", rc);
  if (Status added = add_denials(ctx); !added) return std::move(added).error();

  UniqueFd memfd(::memfd_create("o4s-seccomp-build", MFD_CLOEXEC));
  if (!memfd) return system_error("memfd_create", errno);
  rc = seccomp_export_bpf(ctx, memfd.get());
  if (rc != 0) return seccomp_error("export", rc);
  // The export left the memfd's offset at its end: read it from the start.
  if (::lseek(memfd.get(), 0, SEEK_SET) != 0) return system_error("seek seccomp program", errno);
  auto program = read_to_end(memfd.get(), "seccomp program");
  if (!program) return program;
  if (program->empty()) return make_error(ErrorCode::kSystem, "seccomp: empty program");
  return program;
}

}  // namespace

const std::vector<std::string_view>& denied_syscalls() {
  static const std::vector<std::string_view> names = {
      // Inspecting or steering another process.
      "ptrace",
      "process_vm_readv",
      "process_vm_writev",
      "pidfd_getfd",
      // Changing the filesystem view or the namespaces the sandbox built.
      "mount",
      "umount2",
      "pivot_root",
      "chroot",
      "move_mount",
      "open_tree",
      "fsopen",
      "fsconfig",
      "fsmount",
      "fspick",
      "mount_setattr",
      "unshare",
      "setns",
      // Replacing or extending the running kernel.
      "kexec_load",
      "kexec_file_load",
      "reboot",
      "init_module",
      "finit_module",
      "delete_module",
      // Kernel keyrings: shared state outside every namespace.
      "keyctl",
      "add_key",
      "request_key",
      // Large kernel attack surfaces no cell needs.
      "bpf",
      "perf_event_open",
      "userfaultfd",
      "io_uring_setup",
      "io_uring_enter",
      "io_uring_register",
      // Host-wide administration.
      "swapon",
      "swapoff",
      "acct",
      "quotactl",
      "quotactl_fd",
      "settimeofday",
      "clock_settime",
      "clock_adjtime",
      "adjtimex",
      "syslog",
      "vhangup",
      "nfsservctl",
      "lookup_dcookie",
      "uselib",
      "iopl",
      "ioperm",
      "fanotify_init",
      // File-handle access that bypasses path-based confinement.
      "open_by_handle_at",
      "name_to_handle_at",
  };
  return names;
}

Result<std::shared_ptr<const std::string>> seccomp_program() {
  static std::mutex mutex;
  static std::shared_ptr<const std::string> cached;
  std::lock_guard lock(mutex);
  if (cached) return cached;
  auto compiled = compile();
  if (!compiled) return std::move(compiled).error();
  cached = std::make_shared<const std::string>(std::move(compiled.value()));
  return cached;
}

Result<UniqueFd> seccomp_program_fd() {
  auto program = seccomp_program();
  if (!program) return std::move(program).error();
  UniqueFd fd(::memfd_create("o4s-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_error("memfd_create", errno);
  const std::string& bytes = *program.value();
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("write seccomp program", errno);
    }
    written += static_cast<std::size_t>(n);
  }
  // Sealed so nothing can change the program between here and bwrap's read.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) !=
      0) {
    return system_error("seal seccomp program", errno);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return system_error("rewind seccomp program", errno);
  return fd;
}

std::string seccomp_summary() {
  return "deny list (" + std::to_string(denied_syscalls().size()) +
         " syscalls, namespace clone flags, clone3, TIOCSTI/TIOCLINUX, set-uid/set-gid modes, "
         "foreign ABIs) -> EPERM; openat2 -> ENOSYS; "
         "socket families other than AF_UNIX, AF_INET, AF_INET6, AF_NETLINK -> EAFNOSUPPORT; "
         "netlink protocols other than NETLINK_ROUTE -> EPROTONOSUPPORT";
}

}  // namespace o4s::sandbox
