#include "kernel/environment.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "base/ascii.h"

extern char** environ;

namespace o4s::kernel {

namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 52> kRuntimePassthrough = {
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PATH",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_ADDRESS",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_IDENTIFICATION",
    "LC_MEASUREMENT",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NAME",
    "LC_NUMERIC",
    "LC_PAPER",
    "LC_TELEPHONE",
    "LC_TIME",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PYTHONUSERBASE",
    "MPLBACKEND",
    "MPLCONFIGDIR",
    "OMP_NUM_THREADS",
    "OMP_THREAD_LIMIT",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "OPENBLAS_CORETYPE",
    // A kernel started as a Slurm job (the openai4s-slurm provisioner): a
    // cell can say which job and nodes it runs on. The rest of SLURM_* stays
    // with the host.
    "SLURM_JOB_ID",
    "SLURM_JOB_NODELIST",
};

// Settings the worker itself reads; every other OPENAI4S_* stays on the host.
constexpr std::array<std::string_view, 7> kWorkerSettings = {
    "OPENAI4S_ARTIFACTS_ROOTS",    "OPENAI4S_DATA_DIR",
    "OPENAI4S_DLOPEN_BLOCK_ROOTS", "OPENAI4S_EGRESS",
    "OPENAI4S_GUARDS_OFF",         "OPENAI4S_PROVENANCE_OFF",
    "OPENAI4S_SAFETY_AUDIT_HOOK",
};

constexpr std::array<std::string_view, 13> kLoaderInjection = {
    "BASH_ENV",   "ENV",           "NODE_OPTIONS", "PERL5OPT",       "PYTHONHOME", "PYTHONINSPECT",
    "PYTHONPATH", "PYTHONSTARTUP", "R_ENVIRON",    "R_ENVIRON_USER", "R_PROFILE",  "R_PROFILE_USER",
    "RUBYOPT",
};

constexpr std::array<std::string_view, 13> kSecretFragments = {
    "API_KEY", "APIKEY",   "ACCESS_KEY", "PRIVATE_KEY", "CLIENT_SECRET", "SECRET", "TOKEN",
    "OAUTH",   "PASSWORD", "PASSWD",     "CREDENTIAL",  "BEARER",        "COOKIE",
};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string dirname_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string basename_of(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

const std::string* find(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

}  // namespace

bool name_can_carry_a_secret(std::string_view name) {
  std::string up = ascii::uppered(name);
  if (up.rfind("LD_", 0) == 0 || up.rfind("DYLD_", 0) == 0) return true;
  if (contains(kLoaderInjection, up)) return true;
  return std::any_of(
      kSecretFragments.begin(), kSecretFragments.end(),
      [&](std::string_view fragment) { return up.find(fragment) != std::string::npos; });
}

std::string resolve_path(const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path.empty() ? fs::path(".") : fs::path(path), ec);
  fs::path resolved = fs::weakly_canonical(absolute, ec);
  if (ec) resolved = absolute.lexically_normal();
  return strip_trailing_slashes(resolved.string());
}

EnvMap current_process_environment() {
  EnvMap env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

std::vector<std::string> to_envp(const EnvMap& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

namespace {

// The allowlisted part of the source: nothing that may carry a secret.
EnvMap allowlisted(const EnvMap& source) {
  EnvMap env;
  for (const auto& [name, value] : source) {
    bool allowed = contains(kRuntimePassthrough, name) || contains(kWorkerSettings, name);
    if (allowed && !name_can_carry_a_secret(name)) env[name] = value;
  }
  return env;
}

// PATH led by the selected runtime (a conda prefix, or the interpreter's
// directory), with the matching CONDA_* / VIRTUAL_ENV markers.
void select_runtime(EnvMap& env, const EnvironmentRequest& request) {
  std::string path = env.count("PATH") != 0U ? env["PATH"] : std::string();
  if (path.empty()) path = "/bin:/usr/bin";
  env.erase("VIRTUAL_ENV");
  if (request.env_root && !request.env_root->empty()) {
    // A selected conda runtime wins over the host's venv; unresolved on
    // purpose so the prefix the user named is the one they see.
    const std::string& root = *request.env_root;
    path = strip_trailing_slashes(root) + "/bin:" + path;
    env["CONDA_PREFIX"] = root;
    env["CONDA_DEFAULT_ENV"] =
        request.env_name && !request.env_name->empty() ? *request.env_name : basename_of(root);
    env["CONDA_SHLVL"] = "1";
  } else {
    // Unresolved: a venv's bin/python is usually a symlink to a base Python
    // whose directory has none of the venv's packages. A bare or relative
    // interpreter is ignored so '.' (the workspace) never lands on PATH.
    if (request.interpreter && !request.interpreter->empty() && (*request.interpreter)[0] == '/') {
      path = dirname_of(*request.interpreter) + ":" + path;
    }
    if (const std::string* venv = find(request.source, "VIRTUAL_ENV")) env["VIRTUAL_ENV"] = *venv;
  }
  env["PATH"] = path;
}

// A stable cache so matplotlib does not rebuild its font list per kernel.
std::string matplotlib_cache(const EnvMap& env, const std::string& workspace) {
  for (const char* name : {"TMPDIR", "TEMP", "TMP"}) {
    if (const std::string* value = find(env, name); value != nullptr && !value->empty()) {
      return strip_trailing_slashes(*value) + "/openai4s-matplotlib";
    }
  }
  return workspace + "/.openai4s-runtime/openai4s-matplotlib";
}

// The host-owned values, set after filtering so a source cannot set them.
void add_host_values(EnvMap& env, const EnvironmentRequest& request) {
  std::string workspace = resolve_path(request.cwd.value_or(std::string()));
  env["PWD"] = workspace;
  env["OPENAI4S_WORKSPACE"] = workspace;
  env["OPENAI4S_KERNEL_MODE"] = request.mode;
  if (env.count("MPLCONFIGDIR") == 0U) env["MPLCONFIGDIR"] = matplotlib_cache(env, workspace);
  if (request.kernel_generation && !request.kernel_generation->empty()) {
    env["OPENAI4S_KERNEL_GENERATION"] = *request.kernel_generation;
  } else {
    env.erase("OPENAI4S_KERNEL_GENERATION");
  }
  env["PYTHONPATH"] =
      resolve_path(request.repo_root && !request.repo_root->empty() ? *request.repo_root
                                                                    : request.default_repo_root);
}

}  // namespace

EnvMap build_kernel_environment(const EnvironmentRequest& request) {
  EnvMap env = allowlisted(request.source);
  select_runtime(env, request);
  add_host_values(env, request);
  return env;
}

}  // namespace o4s::kernel
