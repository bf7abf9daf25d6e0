// openai4s-mcp: flags -> settings -> the kernel pool and the MCP server ->
// stdio (default) or Streamable HTTP. Started by `openai4s mcp`, which
// passes the worker's interpreter, the package root and the R argv.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "host/env_sources.h"
#include "mcp/http_transport.h"
#include "mcp/kernel_pool.h"
#include "mcp/server.h"
#include "mcp/stdio_transport.h"

namespace fs = std::filesystem;

namespace {

struct Flags {
  o4s::mcp::PoolSettings pool;
  bool help = false;
  std::string http;  // HOST:PORT; empty: stdio
  std::string token_file;
  bool allow_remote = false;
  std::vector<std::string> allowed_origins;
  std::string engine = "local";  // create_kernel's engine when none is named
  bool slurm = false;            // engine "slurm" may be asked for
};

const char* kUsage =
    "usage: openai4s-mcp --python PYTHON --repo-root DIR [options]\n"
    "\n"
    "An MCP server (stdio) over persistent, sandboxed openai4s kernels.\n"
    "\n"
    "  --python PYTHON          the workers' Python interpreter\n"
    "  --repo-root DIR          the directory holding the openai4s package\n"
    "  --r-worker-argv JSON     the R worker's argv (a JSON array); without it, no R kernels\n"
    "  --data-dir DIR           store, audit log, artifacts and default workspaces\n"
    "                           (default: $OPENAI4S_DATA_DIR or ~/.openai4s)\n"
    "  --workspace-root DIR     a workspace given to create_kernel must lie under DIR\n"
    "                           (default: <data dir>/agent-workspaces)\n"
    "  --max-kernels N          kernels at once (default: 32)\n"
    "  --idle-timeout SECONDS   shut a kernel down after this long unused; 0 = never\n"
    "                           (default: 3600)\n"
    "  --pool LANG=N[,LANG=N]   started workers kept ready for create_kernel, per language\n"
    "                           (python, r; counted against --max-kernels; default python=2;\n"
    "                           python=0 turns the pool off)\n"
    "  --no-standby             no standby worker per kernel (restart_kernel then starts one)\n"
    "  --http [HOST:]PORT       serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio\n"
    "                           (HOST default 127.0.0.1)\n"
    "  --token-file FILE        the bearer token HTTP clients must send (created, mode 0600,\n"
    "                           with a random token when missing; default <data dir>/mcp-token)\n"
    "  --allow-origin ORIGIN    an Origin accepted besides the loopback ones (repeatable)\n"
    "  --allow-remote           let --http bind an address other than loopback\n"
    "  --slurm                  create_kernel may ask for engine \"slurm\": a kernel as a Slurm\n"
    "                           job, through the openai4s-{python,r}-slurm kernelspecs\n"
    "  --engine local|slurm     create_kernel's engine when it names none (default: local)\n"
    "  -h, --help               this text\n";

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

bool parse_number(const std::string& text, long long min, long long& out) {
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < min) return false;
  out = value;
  return true;
}

bool parse_argv_json(const std::string& text, std::vector<std::string>& out) {
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_array() || parsed.empty()) return false;
  for (const auto& item : parsed) {
    if (!item.is_string()) return false;
    out.push_back(item.get<std::string>());
  }
  return true;
}

bool parse_pool(const std::string& text, o4s::mcp::PoolSettings& pool) {
  auto sizes = o4s::mcp::parse_warm_workers(text);
  if (!sizes) {
    std::fprintf(stderr, "openai4s-mcp: %s\n", sizes.error().message.c_str());
    return false;
  }
  for (const auto& [language, size] : sizes.value()) pool.warm_workers[language] = size;
  return true;
}

bool parse_flags(int argc, char** argv, Flags& flags) {
  auto& pool = flags.pool;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    auto take = [&] {
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    long long number = 0;
    bool ok = true;
    if (arg == "-h" || arg == "--help") {
      flags.help = true;
    } else if (arg == "--python") {
      ok = take() && !(pool.python = value).empty();
    } else if (arg == "--repo-root") {
      ok = take() && !(pool.repo_root = value).empty();
    } else if (arg == "--r-worker-argv") {
      ok = take() && parse_argv_json(value, pool.r_worker_argv);
    } else if (arg == "--data-dir") {
      ok = take() && !(pool.data_dir = value).empty();
    } else if (arg == "--workspace-root") {
      ok = take() && !(pool.workspace_root = value).empty();
    } else if (arg == "--http") {
      ok = take() && !(flags.http = value).empty();
    } else if (arg == "--token-file") {
      ok = take() && !(flags.token_file = value).empty();
    } else if (arg == "--allow-origin") {
      ok = take() && !value.empty();
      flags.allowed_origins.push_back(value);
    } else if (arg == "--allow-remote") {
      flags.allow_remote = true;
    } else if (arg == "--slurm") {
      flags.slurm = true;
    } else if (arg == "--engine") {
      ok = take() && (value == "local" || value == "slurm");
      flags.engine = value;
    } else if (arg == "--max-kernels") {
      ok = take() && parse_number(value, 1, number);
      pool.max_kernels = static_cast<std::size_t>(number);
    } else if (arg == "--pool") {
      ok = take() && parse_pool(value, pool);
    } else if (arg == "--no-standby") {
      pool.standby = false;
    } else if (arg == "--idle-timeout") {
      ok = take() && parse_number(value, 0, number);
      pool.idle_timeout = std::chrono::seconds(number);
    } else {
      std::fprintf(stderr, "openai4s-mcp: unknown option %s\n", arg.c_str());
      ok = false;
    }
    if (!ok) return false;
  }
  return flags.help || (!pool.python.empty() && !pool.repo_root.empty());
}

bool resolve_paths(o4s::mcp::PoolSettings& pool) {
  std::error_code ec;
  if (pool.data_dir.empty()) {
    pool.data_dir = env_or("OPENAI4S_DATA_DIR", env_or("HOME", "/nonexistent") + "/.openai4s");
  }
  fs::create_directories(pool.data_dir, ec);
  if (ec) {
    std::fprintf(stderr, "openai4s-mcp: cannot create the data directory %s: %s\n",
                 pool.data_dir.c_str(), ec.message().c_str());
    return false;
  }
  pool.data_dir = fs::canonical(pool.data_dir, ec).string();
  if (pool.workspace_root.empty()) pool.workspace_root = pool.data_dir + "/agent-workspaces";
  fs::create_directories(pool.workspace_root, ec);
  pool.workspace_root = fs::weakly_canonical(pool.workspace_root, ec).string();
  return true;
}

// SIGTERM and SIGINT end the server: every kernel is shut down first (its
// worker and the worker's children), the calls it ended answer and their
// audit rows are written (bounded), then the process exits.
void watch_signals(sigset_t set, o4s::mcp::KernelPool* pool, o4s::mcp::McpServer* server) {
  int signo = 0;
  while (sigwait(&set, &signo) != 0) {
  }
  std::fprintf(stderr, "openai4s-mcp: signal %d: shutting every kernel down\n", signo);
  pool->shutdown_all();
  server->shutdown_slurm_kernels();
  server->drain_for_exit(std::chrono::seconds(5));
  std::_Exit(0);
}

// "[HOST:]PORT" (an IPv6 host in brackets) into the HTTP settings.
bool parse_listen(const std::string& text, o4s::mcp::HttpSettings& http) {
  std::size_t colon = text.rfind(':');
  std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  if (colon != std::string::npos) http.host = text.substr(0, colon);
  long long number = 0;
  if (!parse_number(port, 0, number) || number > 65535 || http.host.empty()) return false;
  http.port = static_cast<std::uint16_t>(number);
  return true;
}

int serve_http(const Flags& flags, o4s::mcp::McpServer& server) {
  o4s::mcp::HttpSettings http;
  if (!parse_listen(flags.http, http)) {
    std::fprintf(stderr, "openai4s-mcp: --http wants [HOST:]PORT, not %s\n", flags.http.c_str());
    return 2;
  }
  if (!o4s::mcp::is_loopback_host(http.host) && !flags.allow_remote) {
    std::fprintf(stderr,
                 "openai4s-mcp: %s is not a loopback address; pass --allow-remote to serve it\n",
                 http.host.c_str());
    return 2;
  }
  std::string token_file =
      flags.token_file.empty() ? flags.pool.data_dir + "/mcp-token" : flags.token_file;
  auto token = o4s::mcp::load_or_create_token(token_file);
  if (!token) {
    std::fprintf(stderr, "openai4s-mcp: %s\n", token.error().message.c_str());
    return 2;
  }
  http.token = token.value();
  http.allowed_origins = flags.allowed_origins;
  auto served = o4s::mcp::serve_http(server, http);
  std::fprintf(stderr, "openai4s-mcp: %s\n", served.error().message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!parse_flags(argc, argv, flags)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (flags.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!resolve_paths(flags.pool)) return 2;
  flags.pool.host.unattended_approval = "deny";  // fail closed: no elicitation, no allow
  flags.pool.host.egress_mode = env_or("OPENAI4S_EGRESS", "");
  flags.pool.host.egress_allow = env_or("OPENAI4S_EGRESS_ALLOW", "");
  flags.pool.host.egress_allow_private = env_or("OPENAI4S_EGRESS_ALLOW_PRIVATE", "");
  flags.pool.host.bash_allowed_roots = env_or("OPENAI4S_BASH_ALLOWED_ROOTS", "");
  for (std::string_view name : o4s::host::kEnvInstallVariables) {
    std::string key(name);
    flags.pool.host.env_install[key] = env_or(key.c_str(), "");
  }

  int protocol_fd = o4s::mcp::take_protocol_stdout();
  if (protocol_fd < 0) {
    std::perror("openai4s-mcp: stdout");
    return 1;
  }
  // Blocked before any thread exists, so only the watcher takes them; a
  // client gone mid-write is an error result, not a SIGPIPE death.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto pool = o4s::mcp::KernelPool::open(flags.pool);
  if (!pool) {
    std::fprintf(stderr, "openai4s-mcp: %s\n", pool.error().message.c_str());
    return 1;
  }
  o4s::mcp::McpServer server(*pool.value(), o4s::mcp::ServerInfo{});
  if (flags.slurm || flags.engine == "slurm") {
    const auto& p = flags.pool;
    server.use_slurm({p.python, p.repo_root, p.data_dir, p.workspace_root},
                     flags.engine == "slurm");
  }
  std::thread(watch_signals, set, pool.value().get(), &server).detach();
  if (!flags.http.empty()) {
    int status = serve_http(flags, server);
    pool.value()->shutdown_all();
    server.shutdown_slurm_kernels();
    return status;
  }
  auto session = std::make_shared<o4s::mcp::Session>(o4s::mcp::line_writer(protocol_fd));
  o4s::mcp::serve_stdio(server, session);
  // End of input: the client is gone. Its cells are interrupted (the
  // session's close), every kernel is shut down, the calls then end.
  pool.value()->shutdown_all();
  server.shutdown_slurm_kernels();
  server.wait_for_calls();
  return 0;
}
