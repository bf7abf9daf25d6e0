// The sandbox state a kernel reports (spec kernel.md §2.13 `status`), plus
// the evidence behind it: the self-test's checks, the limits and how the
// process limit is enforced, and the seccomp policy.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sandbox/resource_limits.h"
#include "sandbox/sandbox_identity.h"
#include "sandbox/sandbox_settings.h"
#include "sandbox/self_test.h"

namespace o4s::sandbox {

struct SandboxStatus {
  std::string mode;                // auto | enforce | off
  std::string state = "disabled";  // enabled | degraded | disabled | unavailable
  std::string backend = "none";    // bubblewrap | none
  bool enforced = false;
  bool self_test_passed = false;
  std::string network_policy = "not_enforced";  // blocked | raw_allowed | not_enforced
  std::string workspace;
  std::string temp_dir;
  std::string detail;
  std::string warning;
  std::string reason;  // a failure cause name (diagnosis.h) when unavailable
  std::vector<SelfTestCheck> checks;
  ResourceLimits limits;
  std::string process_limit;
  EnvelopeReport envelope;
  std::string seccomp;
  std::string version;                      // bubblewrap's
  std::optional<SandboxIdentity> identity;  // set once a sandboxed worker ran

  nlohmann::json to_json() const;
  nlohmann::json identity_json() const;
};

// The banner auto mode prints once per process when it degrades.
std::string security_warning(const std::string& detail);

}  // namespace o4s::sandbox
