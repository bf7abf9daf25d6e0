// Why a sandbox could not be set up, in words a user can act on. The
// commonest failures in the field are a missing bwrap, user namespaces
// disabled by sysctl, Ubuntu's AppArmor restriction on unprivileged user
// namespaces (23.10+), and container runtimes that refuse the mounts or the
// loopback setup bubblewrap performs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace o4s::sandbox {

// Host settings that explain a failure; nullopt = not present on this kernel.
struct HostFacts {
  std::optional<long> unprivileged_userns_clone;  // Debian's kernel.unprivileged_userns_clone
  std::optional<long> max_user_namespaces;        // user.max_user_namespaces
  std::optional<long> apparmor_restrict_userns;   // kernel.apparmor_restrict_unprivileged_userns
  bool in_container = false;                      // /.dockerenv or /run/.containerenv
  bool running_as_root = false;
};

HostFacts read_host_facts();

enum class FailureCause {
  kBwrapMissing,
  kUserNamespacesDisabled,
  kAppArmorRestricted,
  kLoopbackRefused,
  kContainerRefusesMounts,
  kSeccompUnsupported,
  kOther,
};

struct Diagnosis {
  FailureCause cause = FailureCause::kOther;
  std::string message;  // one sentence of cause, one of remedy
};

std::string_view cause_name(FailureCause cause);

Diagnosis bwrap_missing(std::string_view program);

// From what bwrap printed before failing, and the host's settings.
Diagnosis diagnose_bwrap_failure(std::string_view stderr_text, int exit_code,
                                 const HostFacts& facts);

}  // namespace o4s::sandbox
