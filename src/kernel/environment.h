// The worker's environment, rebuilt from an allowlist (spec kernel.md §6):
// secrets and loader-injection variables never reach a worker, host-owned
// values are synthesised after filtering so a hostile source cannot set them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace o4s::kernel {

using EnvMap = std::map<std::string, std::string>;

struct EnvironmentRequest {
  EnvMap source;  // never mutated (it is a copy)
  std::string mode = "repl";
  std::optional<std::string> cwd;
  std::optional<std::string> env_root;
  std::optional<std::string> env_name;
  std::optional<std::string> kernel_generation;
  std::optional<std::string> repo_root;  // default: the package's source root
  std::optional<std::string> interpreter;
  std::string default_repo_root;
};

EnvMap build_kernel_environment(const EnvironmentRequest& request);

// glibc malloc settings for the Python worker only, added at spawn (not part
// of the allowlisted environment). By default every buffer over 128 KiB is a
// fresh mmap whose pages fault in one by one (~1.6 us each here), so a cell
// printing a megabyte paid ~0.8 ms per copy of it. Serving such buffers from
// the heap and keeping up to 32 MiB of freed top reuses warm pages. glibc
// reads the variable at exec; the worker removes it from its environment
// before any cell runs, so cells and their subprocesses never see it.
inline constexpr const char* kWorkerMallocTunablesName = "GLIBC_TUNABLES";
inline constexpr const char* kWorkerMallocTunables =
    "glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=33554432";

// True when a variable name may carry a secret or inject code into a loader
// or interpreter; such a name never passes, whatever the allowlist says.
bool name_can_carry_a_secret(std::string_view name);

// The live process environment as a map.
EnvMap current_process_environment();

std::vector<std::string> to_envp(const EnvMap& env);

// Path.resolve(strict=False): absolute, symlinks of the existing prefix
// resolved, the rest normalised lexically.
std::string resolve_path(const std::string& path);

}  // namespace o4s::kernel
