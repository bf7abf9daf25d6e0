// What a kernel's sandbox should be: the mode (spec kernel.md §2.13), the
// network policy, per-kernel resource limits and the private /tmp size, read
// from the daemon's environment. Parsing is strict: a typo in a security
// setting is an error, never a silent default.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sandbox/uid_lease.h"

namespace o4s::sandbox {

enum class SandboxMode {
  kAuto,     // sandbox when available, otherwise run visibly degraded
  kEnforce,  // refuse to start a kernel without the sandbox
  kOff,      // never sandbox
};

std::string_view mode_name(SandboxMode mode);
// Trimmed and case-insensitive; an empty value means the default, auto.
Result<SandboxMode> parse_mode(std::string_view text);

// Per-kernel limits; nullopt = unlimited. Applied to the worker process
// (and so inherited by everything a cell starts).
struct ResourceLimits {
  std::optional<std::uint64_t> address_space_bytes;  // RLIMIT_AS
  std::optional<std::uint64_t> cpu_seconds;          // RLIMIT_CPU
  std::optional<std::uint64_t> processes;            // RLIMIT_NPROC and a pids cgroup
  std::optional<std::uint64_t> file_size_bytes;      // RLIMIT_FSIZE
};

struct SandboxSettings {
  SandboxMode mode = SandboxMode::kAuto;
  bool allow_raw_network = false;
  ResourceLimits limits;
  std::uint64_t tmpfs_bytes = 0;  // size of each private tmpfs (/tmp, home, /dev/shm)
  // Extra host paths a cell may read (datasets), bound read-only.
  std::vector<std::string> extra_read_paths;
  // The bubblewrap program: a bare name is looked up on the host's PATH.
  std::string bwrap = "bwrap";
  // One fixed host uid/gid for every sandbox of a root daemon
  // (sandbox_identity.h); unset: each kernel leases a uid of its own from
  // `uid_range` (uid_lease.h), locked in `uid_run_directory`.
  std::optional<std::uint32_t> sandbox_uid;
  std::optional<std::uint32_t> sandbox_gid;
  UidRange uid_range = kDefaultUidRange;
  std::string uid_run_directory = kDefaultRunDirectory;
};

using EnvironmentMap = std::map<std::string, std::string>;

// Variables (all optional):
//   OPENAI4S_KERNEL_SANDBOX            auto | enforce | off
//   OPENAI4S_KERNEL_ALLOW_RAW_NETWORK  1/true/yes/on keeps the host network
//   OPENAI4S_KERNEL_MEMORY_LIMIT       size or "none" (default: half of RAM, >= 1G)
//   OPENAI4S_KERNEL_CPU_LIMIT          seconds or "none" (default: none)
//   OPENAI4S_KERNEL_PROCESS_LIMIT      count or "none" (default: 1024)
//   OPENAI4S_KERNEL_FILE_SIZE_LIMIT    size or "none" (default: 8G)
//   OPENAI4S_KERNEL_TMP_SIZE           size (default: 1G)
//   OPENAI4S_KERNEL_SANDBOX_READ_PATHS colon-separated absolute paths
//   OPENAI4S_KERNEL_BWRAP              bubblewrap program (default: bwrap)
//   OPENAI4S_SANDBOX_UID / _GID        host uid / gid of a root daemon's
//                                      sandboxes (never 0): one fixed,
//                                      shared uid instead of one per kernel
//   OPENAI4S_SANDBOX_UID_RANGE         FIRST-LAST: the per-kernel uids
//   OPENAI4S_SANDBOX_RUN_DIR           where their lock files live
Result<SandboxSettings> settings_from_environment(const EnvironmentMap& env,
                                                  std::uint64_t physical_memory_bytes);

// "4096", "512K", "8M", "2G", "1T" (binary multiples); "none"/"unlimited"
// give nullopt.
Result<std::optional<std::uint64_t>> parse_size(std::string_view text);

// MemTotal of this machine (sysinfo), 0 when unknown.
std::uint64_t physical_memory_bytes();

}  // namespace o4s::sandbox
