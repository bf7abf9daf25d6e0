// Can this machine sandbox kernels at all? Answered once per process (per
// bubblewrap program and network policy) by running bubblewrap with the
// kernel's exact isolation options around `bwrap --version`: about 5 ms, and
// it fails exactly where a kernel launch would, with bubblewrap's own message
// to diagnose. A kernel launch then adds only its per-kernel self-test.
#pragma once

#include <optional>
#include <string>

#include "sandbox/diagnosis.h"
#include "sandbox/sandbox_settings.h"

namespace o4s::sandbox {

struct Facility {
  bool available = false;
  std::string bwrap_path;  // resolved
  std::string version;     // what `bwrap --version` printed inside the sandbox
  std::optional<Diagnosis> failure;
  // A root daemon's sandboxes run as an unprivileged uid (sandbox_identity.h)
  // when the probe proved that works: bubblewrap starts as that uid.
  // Otherwise `identity_problem` says why not, and kernels run degraded
  // (auto) or refuse to start (enforce).
  bool drops_root = false;
  std::string identity_problem;
};

// Cached; concurrent first callers wait for one probe.
Facility probe_facility(const SandboxSettings& settings);

// The bubblewrap program resolved against the daemon's PATH; nullopt when
// there is no such executable.
std::optional<std::string> resolve_bwrap(const std::string& program);

}  // namespace o4s::sandbox
