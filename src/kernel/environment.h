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
