// build_kernel_environment (spec kernel.md §6): the worker's environment is
// rebuilt from an allowlist; secrets and loader-injection names never pass;
// host-owned values are synthesised after filtering.
#include "kernel/environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/proc_helpers.h"

namespace o4s::kernel {
namespace {

using o4s::testing::TempDir;
namespace fs = std::filesystem;

// The allowlists as the spec states them (§6.1), written out independently
// of the implementation's tables.
const std::vector<std::string> kRuntimeNames = {
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
    "SLURM_JOB_ID",
    "SLURM_JOB_NODELIST",
};

const std::vector<std::string> kWorkerSettingNames = {
    "OPENAI4S_ARTIFACTS_ROOTS",    "OPENAI4S_DATA_DIR",
    "OPENAI4S_DLOPEN_BLOCK_ROOTS", "OPENAI4S_EGRESS",
    "OPENAI4S_GUARDS_OFF",         "OPENAI4S_PROVENANCE_OFF",
    "OPENAI4S_SAFETY_AUDIT_HOOK",
};

const std::vector<std::string> kSecretFragments = {
    "API_KEY", "APIKEY",   "ACCESS_KEY", "PRIVATE_KEY", "CLIENT_SECRET", "SECRET", "TOKEN",
    "OAUTH",   "PASSWORD", "PASSWD",     "CREDENTIAL",  "BEARER",        "COOKIE",
};

const std::vector<std::string> kLoaderInjectionNames = {
    "BASH_ENV",   "ENV",           "NODE_OPTIONS", "PERL5OPT",       "PYTHONHOME", "PYTHONINSPECT",
    "PYTHONPATH", "PYTHONSTARTUP", "R_ENVIRON",    "R_ENVIRON_USER", "R_PROFILE",  "R_PROFILE_USER",
    "RUBYOPT",
};

// Names synthesised or adjusted by the builder, so a pass-through check
// cannot compare them with the source value.
bool synthesised(const std::string& name) { return name == "PATH" || name == "MPLCONFIGDIR"; }

struct Fixture {
  TempDir workspace;
  TempDir repo;
  EnvironmentRequest request;

  Fixture() {
    request.cwd = workspace.path();
    request.repo_root = repo.path();
    request.default_repo_root = "/nonexistent-default-root";
  }
  EnvMap build() const { return build_kernel_environment(request); }
};

const std::string* get(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

std::string canonical(const std::string& path) { return fs::canonical(path).string(); }

TEST(NameCanCarryASecretTest, EverySecretFragmentAnywhereInTheName) {
  for (const auto& fragment : kSecretFragments) {
    for (const std::string& name :
         {fragment, "MY_" + fragment, fragment + "_FILE", "X" + fragment + "Y"}) {
      EXPECT_TRUE(name_can_carry_a_secret(name)) << name;
    }
  }
}

TEST(NameCanCarryASecretTest, LoaderPrefixesAndInjectionNames) {
  for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_",
                           "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH"}) {
    EXPECT_TRUE(name_can_carry_a_secret(name)) << name;
  }
  for (const auto& name : kLoaderInjectionNames) {
    EXPECT_TRUE(name_can_carry_a_secret(name)) << name;
  }
}

TEST(NameCanCarryASecretTest, IsCaseInsensitive) {
  for (const char* name : {"ld_preload", "Dyld_Insert_Libraries", "github_token", "Db_Password",
                           "pythonpath", "bash_env", "aws_secret_access_key", "session_cookie"}) {
    EXPECT_TRUE(name_can_carry_a_secret(name)) << name;
  }
}

TEST(NameCanCarryASecretTest, OrdinaryNamesAreNotForbidden) {
  for (const auto& name : kRuntimeNames) EXPECT_FALSE(name_can_carry_a_secret(name)) << name;
  for (const auto& name : kWorkerSettingNames) EXPECT_FALSE(name_can_carry_a_secret(name)) << name;
  // Injection names match exactly, prefixes only where the spec says so.
  for (const char* name : {"ENVIRONMENT", "MY_ENV", "OLD_LD", "PYTHONPATHS_X", "XLD_PRELOAD",
                           "PYTHONUNBUFFERED", "RUBY", "VIRTUAL_ENV"}) {
    EXPECT_FALSE(name_can_carry_a_secret(name)) << name;
  }
}

TEST(BuildKernelEnvironmentTest, EveryAllowlistedNamePassesThrough) {
  Fixture f;
  for (const auto& name : kRuntimeNames) f.request.source[name] = "value-of-" + name;
  for (const auto& name : kWorkerSettingNames) f.request.source[name] = "value-of-" + name;
  EnvMap env = f.build();
  for (const auto& name : kRuntimeNames) {
    if (synthesised(name)) continue;
    const std::string* value = get(env, name);
    ASSERT_NE(value, nullptr) << name;
    EXPECT_EQ(*value, "value-of-" + name);
  }
  for (const auto& name : kWorkerSettingNames) {
    const std::string* value = get(env, name);
    ASSERT_NE(value, nullptr) << name;
    EXPECT_EQ(*value, "value-of-" + name);
  }
  EXPECT_EQ(env["MPLCONFIGDIR"], "value-of-MPLCONFIGDIR");  // inherited wins
}

TEST(BuildKernelEnvironmentTest, NamesOutsideTheAllowlistAreDropped) {
  Fixture f;
  const std::vector<std::string> hostile = {
      // Credentials and secrets of every fragment.
      "OPENAI_API_KEY", "ANTHROPIC_APIKEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
      "GH_PRIVATE_KEY", "AZURE_CLIENT_SECRET", "GITHUB_TOKEN", "GOOGLE_OAUTH_ID", "DB_PASSWORD",
      "MYSQL_PASSWD", "GOOGLE_APPLICATION_CREDENTIALS", "BEARER", "SESSION_COOKIE",
      // Host-only openai4s settings.
      "OPENAI4S_LLM_API_KEY", "OPENAI4S_ARK_API_KEY", "OPENAI4S_KERNEL_SANDBOX", "OPENAI4S_X",
      // Loader and interpreter injection.
      "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV", "NODE_OPTIONS",
      "PERL5OPT", "PYTHONHOME", "PYTHONINSPECT", "PYTHONSTARTUP", "R_ENVIRON", "R_ENVIRON_USER",
      "R_PROFILE", "R_PROFILE_USER", "RUBYOPT",
      // Deliberately absent: proxies embed credentials, agent sockets grant access.
      "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "ALL_PROXY", "SSH_AUTH_SOCK",
      // Only the job's id and nodes of a Slurm job's variables reach a cell.
      "SLURM_CONF", "SLURM_JOB_ACCOUNT", "SLURM_SUBMIT_DIR",
      // Allowlisted names in the wrong case are different variables.
      "home", "Path"};
  for (const auto& name : hostile) f.request.source[name] = "leak";
  EnvMap env = f.build();
  for (const auto& name : hostile) EXPECT_EQ(get(env, name), nullptr) << name;
  for (const auto& [name, value] : env) EXPECT_NE(value, "leak") << name;
}

TEST(BuildKernelEnvironmentTest, PythonPathIsReplacedByTheRepoRoot) {
  Fixture f;
  f.request.source["PYTHONPATH"] = "/evil/site:/more";
  EnvMap env = f.build();
  EXPECT_EQ(env["PYTHONPATH"], canonical(f.repo.path()));
}

TEST(BuildKernelEnvironmentTest, DefaultRepoRootWhenNoneOrEmptyGiven) {
  Fixture f;
  TempDir fallback;
  f.request.default_repo_root = fallback.path();
  for (auto root : {std::optional<std::string>(), std::optional<std::string>("")}) {
    f.request.repo_root = root;
    EXPECT_EQ(f.build()["PYTHONPATH"], canonical(fallback.path()));
  }
}

TEST(BuildKernelEnvironmentTest, SynthesisedValuesOverrideHostileSourceValues) {
  Fixture f;
  f.request.mode = "pipeline";
  f.request.kernel_generation = "kernel:abc";
  for (const char* name :
       {"PWD", "OPENAI4S_WORKSPACE", "OPENAI4S_KERNEL_MODE", "OPENAI4S_KERNEL_GENERATION",
        "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_SHLVL", "PYTHONPATH"}) {
    f.request.source[name] = "hostile";
  }
  EnvMap env = f.build();
  const std::string workspace = canonical(f.workspace.path());
  EXPECT_EQ(env["PWD"], workspace);
  EXPECT_EQ(env["OPENAI4S_WORKSPACE"], workspace);
  EXPECT_EQ(env["OPENAI4S_KERNEL_MODE"], "pipeline");
  EXPECT_EQ(env["OPENAI4S_KERNEL_GENERATION"], "kernel:abc");
  EXPECT_EQ(env["PYTHONPATH"], canonical(f.repo.path()));
  // No env_root: the conda variables are not synthesised and not inherited.
  EXPECT_EQ(get(env, "CONDA_PREFIX"), nullptr);
  EXPECT_EQ(get(env, "CONDA_DEFAULT_ENV"), nullptr);
  EXPECT_EQ(get(env, "CONDA_SHLVL"), nullptr);
}

TEST(BuildKernelEnvironmentTest, KernelGenerationAbsentUnlessGiven) {
  Fixture f;
  f.request.source["OPENAI4S_KERNEL_GENERATION"] = "kernel:stale";
  for (auto generation : {std::optional<std::string>(), std::optional<std::string>("")}) {
    f.request.kernel_generation = generation;
    EXPECT_EQ(get(f.build(), "OPENAI4S_KERNEL_GENERATION"), nullptr);
  }
}

TEST(BuildKernelEnvironmentTest, DefaultModeIsRepl) {
  Fixture f;
  EXPECT_EQ(f.build()["OPENAI4S_KERNEL_MODE"], "repl");
}

struct PathCase {
  const char* label;
  std::optional<std::string> source_path;
  std::optional<std::string> interpreter;
  std::string expected;
};

TEST(BuildKernelEnvironmentTest, PathSelectionWithoutACondaRoot) {
  const std::vector<PathCase> cases = {
      {"venv interpreter leads", "/usr/bin:/bin", "/opt/venv/bin/python",
       "/opt/venv/bin:/usr/bin:/bin"},
      {"bare interpreter ignored", "/usr/bin:/bin", "python", "/usr/bin:/bin"},
      {"dot-relative ignored", "/usr/bin:/bin", "./python", "/usr/bin:/bin"},
      {"relative ignored", "/usr/bin:/bin", "venv/bin/python", "/usr/bin:/bin"},
      {"empty ignored", "/usr/bin:/bin", "", "/usr/bin:/bin"},
      {"omitted", "/usr/bin:/bin", std::nullopt, "/usr/bin:/bin"},
      {"no de-duplication", "/usr/bin:/bin", "/usr/bin/python3", "/usr/bin:/usr/bin:/bin"},
      {"root interpreter", "/usr/bin", "/python", "/:/usr/bin"},
      {"empty PATH defaults", "", std::nullopt, "/bin:/usr/bin"},
      {"missing PATH defaults", std::nullopt, std::nullopt, "/bin:/usr/bin"},
      {"default behind interpreter", std::nullopt, "/opt/py/bin/python3",
       "/opt/py/bin:/bin:/usr/bin"},
  };
  for (const auto& c : cases) {
    Fixture f;
    if (c.source_path) f.request.source["PATH"] = *c.source_path;
    f.request.interpreter = c.interpreter;
    EnvMap env = f.build();
    EXPECT_EQ(env["PATH"], c.expected) << c.label;
    // '.' (the workspace) never lands on PATH.
    EXPECT_EQ(("" + env["PATH"] + ":").find(".:"), std::string::npos) << c.label;
  }
}

TEST(BuildKernelEnvironmentTest, InterpreterDirectoryIsNotResolved) {
  // A venv's bin/python is a symlink into a base install whose directory has
  // none of the venv's packages: the venv's own bin must lead PATH.
  Fixture f;
  TempDir venv;
  fs::create_directories(venv.file("bin"));
  fs::create_symlink("/usr/bin/python3", venv.file("bin/python"));
  f.request.source["PATH"] = "/usr/bin:/bin";
  f.request.interpreter = venv.file("bin/python");
  EXPECT_EQ(f.build()["PATH"], venv.file("bin") + ":/usr/bin:/bin");
}

TEST(BuildKernelEnvironmentTest, VirtualEnvIsCopiedWithoutACondaRoot) {
  Fixture f;
  f.request.source["VIRTUAL_ENV"] = "/opt/venv";
  EXPECT_EQ(f.build()["VIRTUAL_ENV"], "/opt/venv");
  f.request.source.erase("VIRTUAL_ENV");
  EXPECT_EQ(get(f.build(), "VIRTUAL_ENV"), nullptr);
}

TEST(BuildKernelEnvironmentTest, CondaRootSelectsTheEnvironment) {
  Fixture f;
  TempDir conda;
  const std::string root = conda.file("science");
  f.request.source["PATH"] = "/usr/bin:/bin";
  f.request.source["VIRTUAL_ENV"] = "/opt/venv";
  f.request.interpreter = "/opt/venv/bin/python";
  f.request.env_root = root;
  EnvMap env = f.build();
  // The conda runtime wins: its bin leads, unresolved; no venv, no
  // interpreter directory.
  EXPECT_EQ(env["PATH"], root + "/bin:/usr/bin:/bin");
  EXPECT_EQ(env["CONDA_PREFIX"], root);
  EXPECT_EQ(env["CONDA_DEFAULT_ENV"], "science");
  EXPECT_EQ(env["CONDA_SHLVL"], "1");
  EXPECT_EQ(get(env, "VIRTUAL_ENV"), nullptr);
}

TEST(BuildKernelEnvironmentTest, CondaEnvNameWinsOverTheBasename) {
  Fixture f;
  f.request.env_root = "/opt/conda/envs/science";
  f.request.env_name = "sci-2024";
  EnvMap env = f.build();
  EXPECT_EQ(env["CONDA_DEFAULT_ENV"], "sci-2024");
  f.request.env_name = "";
  EXPECT_EQ(f.build()["CONDA_DEFAULT_ENV"], "science");
}

TEST(BuildKernelEnvironmentTest, CondaRootWithTrailingSlash) {
  Fixture f;
  f.request.source["PATH"] = "/usr/bin";
  f.request.env_root = "/opt/conda/envs/science/";
  EnvMap env = f.build();
  EXPECT_EQ(env["PATH"], "/opt/conda/envs/science/bin:/usr/bin");
  EXPECT_EQ(env["CONDA_DEFAULT_ENV"], "science");
}

TEST(BuildKernelEnvironmentTest, EmptyCondaRootIsNoSelection) {
  Fixture f;
  f.request.source["PATH"] = "/usr/bin";
  f.request.env_root = "";
  f.request.interpreter = "/opt/py/bin/python";
  EnvMap env = f.build();
  EXPECT_EQ(env["PATH"], "/opt/py/bin:/usr/bin");
  EXPECT_EQ(get(env, "CONDA_PREFIX"), nullptr);
}

TEST(BuildKernelEnvironmentTest, MplConfigDirRule) {
  struct Case {
    const char* label;
    EnvMap temps;
    std::string base;  // the directory the cache goes under
  };
  const std::vector<Case> cases = {
      {"TMPDIR first", {{"TMPDIR", "/t1"}, {"TEMP", "/t2"}, {"TMP", "/t3"}}, "/t1"},
      {"TEMP before TMP", {{"TEMP", "/t2"}, {"TMP", "/t3"}}, "/t2"},
      {"TMP last", {{"TMP", "/t3"}}, "/t3"},
      {"empty TMPDIR skipped", {{"TMPDIR", ""}, {"TMP", "/t3"}}, "/t3"},
      {"trailing slash joined once", {{"TMPDIR", "/t1/"}}, "/t1"},
  };
  for (const auto& c : cases) {
    Fixture f;
    for (const auto& [k, v] : c.temps) f.request.source[k] = v;
    EXPECT_EQ(f.build()["MPLCONFIGDIR"], c.base + "/openai4s-matplotlib") << c.label;
  }
  Fixture none;
  EXPECT_EQ(none.build()["MPLCONFIGDIR"],
            canonical(none.workspace.path()) + "/.openai4s-runtime/openai4s-matplotlib");
}

TEST(BuildKernelEnvironmentTest, WorkspaceIsResolved) {
  TempDir dir;
  fs::create_directories(dir.file("real"));
  fs::create_directory_symlink(dir.file("real"), dir.file("link"));
  Fixture f;
  f.request.cwd = dir.file("link") + "/";
  EnvMap env = f.build();
  EXPECT_EQ(env["PWD"], canonical(dir.file("real")));
  EXPECT_EQ(env["OPENAI4S_WORKSPACE"], env["PWD"]);
}

TEST(BuildKernelEnvironmentTest, NoCwdMeansTheCurrentDirectory) {
  Fixture f;
  f.request.cwd.reset();
  EXPECT_EQ(f.build()["PWD"], canonical(fs::current_path().string()));
}

TEST(ResolvePathTest, ResolvesTheExistingPrefixAndNormalisesTheRest) {
  TempDir dir;
  fs::create_directories(dir.file("real"));
  fs::create_directory_symlink(dir.file("real"), dir.file("link"));
  const std::string real = canonical(dir.file("real"));
  EXPECT_EQ(resolve_path(dir.file("link")), real);
  EXPECT_EQ(resolve_path(dir.file("link/missing/../x")), real + "/x");
  EXPECT_EQ(resolve_path(dir.file("link/missing/")), real + "/missing");
  EXPECT_EQ(resolve_path("/"), "/");
}

TEST(ResolvePathTest, RelativeAndEmptyAreTakenFromTheCurrentDirectory) {
  const std::string here = canonical(fs::current_path().string());
  EXPECT_EQ(resolve_path(""), here);
  EXPECT_EQ(resolve_path("."), here);
  EXPECT_EQ(resolve_path("some/sub"), here + "/some/sub");
}

TEST(EnvironmentHelpersTest, ToEnvpFormatsEntries) {
  std::vector<std::string> envp = to_envp({{"A", "1"}, {"B", "x=y"}, {"C", ""}});
  EXPECT_EQ(envp, (std::vector<std::string>{"A=1", "B=x=y", "C="}));
}

TEST(EnvironmentHelpersTest, CurrentProcessEnvironmentSeesTheLiveEnvironment) {
  ASSERT_EQ(::setenv("O4S_ENVIRONMENT_TEST", "a=b", 1), 0);
  EnvMap env = current_process_environment();
  ::unsetenv("O4S_ENVIRONMENT_TEST");
  ASSERT_EQ(env.count("O4S_ENVIRONMENT_TEST"), 1U);
  EXPECT_EQ(env["O4S_ENVIRONMENT_TEST"], "a=b");
}

}  // namespace
}  // namespace o4s::kernel
