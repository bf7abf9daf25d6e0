// The per-kernel proof that the sandbox is in force, taken from the host side
// by reading the pinned worker's procfs entries -- its namespaces, its status
// and the filesystem it sees through /proc/<pid>/root. It inspects the real
// worker rather than a stand-in program, costs no process and well under a
// millisecond, and runs after the worker has executed its program and before
// the host sends it the handshake, so no cell ever runs in an unproven
// sandbox.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sandbox/sandbox_identity.h"
#include "sandbox/sandbox_settings.h"
#include "sandbox/worker_pin.h"

namespace o4s::sandbox {

struct SelfTestExpectations {
  std::string workspace;                   // must be writable
  std::optional<std::string> masked_home;  // must show only allowed entries
  std::vector<std::string> home_allowed_entries;
  std::vector<std::string> read_only_paths;  // writes must be refused
  bool network_isolated = true;
  ResourceLimits limits;
  std::string private_tmp = "/tmp";  // writable, and not the host's
  SandboxIdentity identity;          // the host ids the worker must have
};

struct SelfTestCheck {
  std::string name;
  bool passed = false;
  std::string detail;
};

struct SelfTestReport {
  std::vector<SelfTestCheck> checks;
  bool passed() const;
  // "name: detail; ..." of the failed checks.
  std::string failures() const;
  // True when every failed check is one auto mode may run degraded with
  // (the host-root checks: the sandbox still isolates, but as host root).
  bool only_degradable_failures() const;
};

// The checks auto mode tolerates, reporting the kernel degraded.
inline constexpr const char* kUidCheck = "sandbox_uid_not_host_root";
inline constexpr const char* kProcSysCheck = "proc_sys_read_only";

SelfTestReport run_self_test(const PinnedWorker& worker, const SelfTestExpectations& expect);

}  // namespace o4s::sandbox
