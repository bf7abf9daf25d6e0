#include "sandbox/diagnosis.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/file_io.h"

namespace o4s::sandbox {

namespace {

std::optional<long> read_number(const char* path) {
  auto text = read_file(path);
  if (!text) return std::nullopt;
  const char* start = text->c_str();
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(start, &end, 10);
  if (errno != 0 || end == start) return std::nullopt;
  return value;
}

bool exists(const char* path) { return ::access(path, F_OK) == 0; }

bool has(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

// bwrap's own line ("bwrap: ..."), for quoting.
std::string first_bwrap_line(std::string_view text) {
  std::size_t at = text.find("bwrap:");
  if (at == std::string_view::npos) at = 0;
  std::size_t end = text.find('\n', at);
  std::string line(text.substr(at, end == std::string_view::npos ? text.size() - at : end - at));
  if (line.size() > 300) line.resize(300);
  return line;
}

std::string quoted(std::string_view text) {
  std::string line = first_bwrap_line(text);
  return line.empty() ? std::string() : " (" + line + ")";
}

Diagnosis userns_disabled(std::string_view stderr_text, const HostFacts& facts) {
  std::string setting;
  if (facts.unprivileged_userns_clone && *facts.unprivileged_userns_clone == 0) {
    setting = "kernel.unprivileged_userns_clone=0";
  } else if (facts.max_user_namespaces && *facts.max_user_namespaces == 0) {
    setting = "user.max_user_namespaces=0";
  }
  std::string message = "user namespaces are disabled on this host";
  if (!setting.empty()) message += " (" + setting + ")";
  message += ", so bubblewrap cannot create the kernel's sandbox" + quoted(stderr_text) +
             ". Enable them (sysctl -w kernel.unprivileged_userns_clone=1, or raise "
             "user.max_user_namespaces)";
  if (facts.in_container) {
    message +=
        "; inside a container, also allow unshare/clone of user namespaces in its "
        "seccomp profile";
  }
  message += ", or set OPENAI4S_KERNEL_SANDBOX=off to run kernels without an OS sandbox.";
  return {FailureCause::kUserNamespacesDisabled, std::move(message)};
}

}  // namespace

HostFacts read_host_facts() {
  HostFacts facts;
  facts.unprivileged_userns_clone = read_number("/proc/sys/kernel/unprivileged_userns_clone");
  facts.max_user_namespaces = read_number("/proc/sys/user/max_user_namespaces");
  facts.apparmor_restrict_userns =
      read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  facts.in_container = exists("/.dockerenv") || exists("/run/.containerenv");
  facts.running_as_root = ::geteuid() == 0;
  return facts;
}

std::string_view cause_name(FailureCause cause) {
  switch (cause) {
    case FailureCause::kBwrapMissing:
      return "bwrap_missing";
    case FailureCause::kUserNamespacesDisabled:
      return "user_namespaces_disabled";
    case FailureCause::kAppArmorRestricted:
      return "apparmor_restricts_user_namespaces";
    case FailureCause::kLoopbackRefused:
      return "loopback_refused";
    case FailureCause::kContainerRefusesMounts:
      return "container_refuses_mounts";
    case FailureCause::kSeccompUnsupported:
      return "seccomp_unsupported";
    case FailureCause::kOther:
      return "other";
  }
  return "other";
}

Diagnosis bwrap_missing(std::string_view program) {
  return {FailureCause::kBwrapMissing,
          "bubblewrap is not installed (no executable '" + std::string(program) +
              "' on PATH), so kernels cannot be sandboxed. Install it (Debian/Ubuntu: apt "
              "install bubblewrap; Fedora: dnf install bubblewrap), or set "
              "OPENAI4S_KERNEL_SANDBOX=off to run kernels without an OS sandbox."};
}

Diagnosis diagnose_bwrap_failure(std::string_view stderr_text, int exit_code,
                                 const HostFacts& facts) {
  if (has(stderr_text, "loopback")) {
    return {FailureCause::kLoopbackRefused,
            "the host refused to set up loopback networking in the sandbox's new network "
            "namespace" +
                quoted(stderr_text) +
                ", which happens in nested containers that lack CAP_NET_ADMIN over their "
                "namespaces. Run the outer container with user namespaces allowed (e.g. "
                "podman/docker --security-opt seccomp=unconfined), or set "
                "OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=1 to keep the host network (the kernel then "
                "reports network_policy=raw_allowed)."};
  }
  bool namespace_refused = has(stderr_text, "new namespace") || has(stderr_text, "uid map") ||
                           has(stderr_text, "gid map") || has(stderr_text, "uid_map") ||
                           has(stderr_text, "setgroups");
  if (namespace_refused && facts.apparmor_restrict_userns && *facts.apparmor_restrict_userns != 0) {
    return {FailureCause::kAppArmorRestricted,
            "AppArmor restricts unprivileged user namespaces on this host "
            "(kernel.apparmor_restrict_unprivileged_userns=1, the default since Ubuntu 23.10), "
            "so bubblewrap cannot set up the kernel's sandbox" +
                quoted(stderr_text) +
                ". Install an AppArmor profile that grants 'userns' to bwrap (Ubuntu's apparmor "
                "package ships bwrap-userns-restrict), or run sysctl -w "
                "kernel.apparmor_restrict_unprivileged_userns=0, or set "
                "OPENAI4S_KERNEL_SANDBOX=off."};
  }
  if (namespace_refused) return userns_disabled(stderr_text, facts);
  if (has(stderr_text, "mount") || has(stderr_text, "slave") || has(stderr_text, "pivot_root")) {
    return {FailureCause::kContainerRefusesMounts,
            "the sandbox's filesystem could not be mounted" + quoted(stderr_text) +
                (facts.in_container
                     ? ": this container's runtime (its seccomp/AppArmor profile or a masked "
                       "/proc) refuses the mounts bubblewrap needs. Allow them (e.g. "
                       "--security-opt seccomp=unconfined --security-opt apparmor=unconfined), "
                       "or set OPENAI4S_KERNEL_SANDBOX=off."
                     : ". Check that bubblewrap works on this host (bwrap --ro-bind / / true), "
                       "or set OPENAI4S_KERNEL_SANDBOX=off.")};
  }
  if (has(stderr_text, "seccomp") || has(stderr_text, "PR_SET_SECCOMP")) {
    return {FailureCause::kSeccompUnsupported,
            "the kernel refused the sandbox's seccomp filter" + quoted(stderr_text) +
                ". A kernel built without CONFIG_SECCOMP_FILTER cannot host the sandbox; set "
                "OPENAI4S_KERNEL_SANDBOX=off there."};
  }
  std::string line = first_bwrap_line(stderr_text);
  if (line.empty()) line = "no message, exit status " + std::to_string(exit_code);
  return {FailureCause::kOther, "bubblewrap could not start the sandbox: " + line +
                                    ". Set OPENAI4S_KERNEL_SANDBOX=off to run without it."};
}

}  // namespace o4s::sandbox
