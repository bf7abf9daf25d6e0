// Applying per-kernel resource limits to a running worker from the host.
//
// The limits are set with prlimit(2) on the pinned worker after it has
// executed its program and before the host sends it anything, so no cell code
// can run without them and everything a cell starts inherits them. Doing it
// from the host (instead of between fork and exec) keeps the spawn path free
// of extra helpers and applies equally to a worker inside a PID namespace.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/result.h"
#include "sandbox/sandbox_settings.h"

namespace o4s::sandbox {

// Sets soft = hard for every limit present; the worker cannot raise a hard
// limit again (that needs CAP_SYS_RESOURCE in the initial user namespace).
Status apply_limits(pid_t pid, const ResourceLimits& limits);

// True when `pid`'s limits are at least as strict as `limits` (the self-test
// reads them back instead of trusting the calls above).
Result<bool> limits_hold(pid_t pid, const ResourceLimits& limits);

// How each resource of the envelope is enforced, for the status.
struct EnvelopeReport {
  std::string memory = "not applied: no sandbox";
  std::string processes = "not applied: no sandbox";
  std::string cpu = "not applied: no sandbox";
  bool memory_includes_tmpfs = false;
};

// "4.0 GiB", "1024", "unlimited": for status and messages.
std::string describe_bytes(const std::optional<std::uint64_t>& bytes);

}  // namespace o4s::sandbox
