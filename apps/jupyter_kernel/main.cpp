// openai4s-jupyter-kernel-core: flags -> settings -> a xeus kernel over the
// C++ kernel manager. Started by a Jupyter client from the `openai4s-python`
// kernelspec (`openai4s jupyter install`) with -f <connection file>, through
// the launcher (launcher_main.cpp), which adds --listening-fds.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>
#include <xeus/xeus_context.hpp>
#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <zmq.hpp>

#include "early_listen.h"
#include "host/env_sources.h"
#include "iopub_hold.h"
#include "jupyter/history.h"
#include "jupyter/interpreter.h"
#include "jupyter/interrupting_server.h"
#include "proc/signals.h"
#include "socket_guard.h"

namespace fs = std::filesystem;

namespace {

struct Flags {
  std::string connection_file;
  std::string listening_fds;  // from the launcher
  o4s::jupyter::KernelSettings settings;
};

const char* kUsage =
    "usage: openai4s-jupyter-kernel -f CONNECTION_FILE --python PYTHON --repo-root DIR\n"
    "                               [--workspace DIR] [--data-dir DIR]\n"
    "                               [--lang python|r] [--worker-argv JSON_ARRAY]\n"
    "                               [--language-version VERSION]\n"
    "(--lang r needs --worker-argv: the R worker's argv, as `openai4s jupyter install\n"
    "--lang r` writes it)\n";

// A JSON array of strings, or nothing.
bool parse_argv_json(const std::string& text, std::vector<std::string>& out) {
  auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array() || parsed.empty()) return false;
  for (const auto& item : parsed) {
    if (!item.is_string()) return false;
    out.push_back(item.get<std::string>());
  }
  return true;
}

// What a kernelspec records as the worker's version ("3.11.2", "4.2.2"):
// it is echoed to every client, so nothing but a short dotted word.
bool plain_version(const std::string& text) {
  if (text.empty() || text.size() > 32) return false;
  for (char c : text) {
    bool plain = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 c == '.' || c == '+' || c == '-';
    if (!plain) return false;
  }
  return true;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

bool parse_flags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "-f" || arg == "--connection-file") {
      ok = value(flags.connection_file);
    } else if (arg == "--listening-fds") {
      ok = flags.listening_fds.empty() && value(flags.listening_fds);
    } else if (arg == "--python") {
      ok = value(flags.settings.python);
    } else if (arg == "--repo-root") {
      ok = value(flags.settings.repo_root);
    } else if (arg == "--workspace") {
      ok = value(flags.settings.workspace);
    } else if (arg == "--data-dir") {
      ok = value(flags.settings.data_dir);
    } else if (arg == "--lang") {
      ok = value(flags.settings.language) &&
           (flags.settings.language == "python" || flags.settings.language == "r");
    } else if (arg == "--language-version") {
      ok = value(flags.settings.language_version) && plain_version(flags.settings.language_version);
    } else if (arg == "--worker-argv") {
      std::string text;
      ok = value(text) && parse_argv_json(text, flags.settings.worker_argv);
    } else {
      ok = false;
    }
    if (!ok) return false;
  }
  if (flags.settings.language == "r" && flags.settings.worker_argv.empty()) return false;
  return !flags.connection_file.empty() && !flags.settings.python.empty() &&
         !flags.settings.repo_root.empty();
}

// The store is the host's record of permissions and audit: a workspace the
// worker can write must not contain it.
bool inside(const fs::path& path, const fs::path& dir) {
  auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

bool resolve_paths(o4s::jupyter::KernelSettings& s) {
  std::error_code ec;
  if (s.workspace.empty()) s.workspace = fs::current_path(ec).string();
  if (s.data_dir.empty()) {
    s.data_dir = env_or("OPENAI4S_DATA_DIR", env_or("HOME", "/nonexistent") + "/.openai4s");
  }
  fs::create_directories(fs::path(s.data_dir) / "artifacts", ec);
  fs::path workspace = fs::weakly_canonical(s.workspace, ec);
  fs::path data = fs::weakly_canonical(s.data_dir, ec);
  if (inside(data, workspace)) {
    std::fprintf(stderr,
                 "openai4s-jupyter-kernel: the data directory %s is inside the workspace %s; the "
                 "worker could rewrite its own permissions. Use --data-dir or OPENAI4S_DATA_DIR.\n",
                 data.c_str(), workspace.c_str());
    return false;
  }
  s.workspace = workspace.string();
  s.data_dir = data.string();
  return true;
}

o4s::host::HostSettings host_settings() {
  o4s::host::HostSettings settings;
  settings.unattended_approval = env_or("OPENAI4S_UNATTENDED_APPROVAL", "deny");
  settings.egress_mode = env_or("OPENAI4S_EGRESS", "");
  settings.egress_allow = env_or("OPENAI4S_EGRESS_ALLOW", "");
  settings.egress_allow_private = env_or("OPENAI4S_EGRESS_ALLOW_PRIVATE", "");
  settings.bash_allowed_roots = env_or("OPENAI4S_BASH_ALLOWED_ROOTS", "");
  for (std::string_view name : o4s::host::kEnvInstallVariables) {
    std::string key(name);
    settings.env_install[key] = env_or(key.c_str(), "");
  }
  return settings;
}

// Signal-mode interrupts (SIGINT from the client) and a polite SIGTERM are
// taken by one thread with sigwait, never by a handler: interrupting the
// worker takes locks, which a handler must not.
void watch_signals(const sigset_t& set, o4s::jupyter::Interpreter* interpreter) {
  for (;;) {
    int signo = 0;
    if (sigwait(&set, &signo) != 0) continue;
    if (signo == SIGINT) {
      interpreter->interrupt();
    } else {
      interpreter->stop_worker();
      std::_Exit(128 + signo);
    }
  }
}

// A kernel started by a Jupyter client (jupyter_client sets JPY_PARENT_PID)
// ends with that client, as ipykernel does: a notebook server or console
// killed with SIGKILL must not leave the kernel and its worker running with
// no one to stop them.
void stop_with_parent(o4s::jupyter::Interpreter* interpreter) {
  const char* named = std::getenv("JPY_PARENT_PID");
  if (named == nullptr || *named == '\0') return;
  char* end = nullptr;
  long parent = std::strtol(named, &end, 10);
  if (*end != '\0' || parent <= 1 || parent != static_cast<long>(getppid())) return;
  auto pidfd = o4s::proc::open_pidfd(static_cast<pid_t>(parent));
  if (!pidfd) return;
  // Checked again after the open: a parent that died before it would give
  // a pidfd of a recycled pid, or none.
  if (getppid() != static_cast<pid_t>(parent)) {
    interpreter->stop_worker();
    std::_Exit(0);
  }
  std::thread([fd = std::move(pidfd.value()), interpreter] {
    pollfd waiting{fd.get(), POLLIN, 0};
    for (;;) {
      if (::poll(&waiting, 1, -1) > 0) break;  // readable: the parent exited
      if (errno != EINTR) return;              // cannot watch: keep running
    }
    interpreter->stop_worker();
    std::_Exit(0);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!parse_flags(argc, argv, flags)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!o4s::jupyter_app::adopt_listening_fds(flags.listening_fds)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!resolve_paths(flags.settings)) return 2;
  flags.settings.host = host_settings();

  // Blocked before any thread exists, so every thread (xeus's, the
  // supervisor's) inherits the mask and only the watcher takes them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A worker gone mid-write (a held or killed worker's pipe at shutdown)
  // is an error the transport reports, not a SIGPIPE death of the kernel
  // (exit -13 in a shutdown while the worker was held), as in the MCP server.
  signal(SIGPIPE, SIG_IGN);

  auto created = o4s::jupyter::Interpreter::create(flags.settings);
  if (!created) {
    std::fprintf(stderr, "openai4s-jupyter-kernel: %s\n", created.error().message.c_str());
    return 1;
  }
  std::unique_ptr<o4s::jupyter::Interpreter> interpreter = std::move(created.value());
  o4s::jupyter::Interpreter* raw = interpreter.get();
  // A kernel stopped before anyone subscribed to iopub must not wait out
  // the hold (iopub_hold.h): xeus's stop waits for its publisher thread.
  o4s::jupyter::set_server_hooks({[raw] { raw->interrupt(); }, &o4s::jupyter_app::release_hold,
                                  [raw](bool unstored) { raw->note_execute(unstored); }});

  xeus::xconfiguration config = xeus::load_configuration(flags.connection_file);
  // Before the kernel creates its sockets (socket_guard.h).
  o4s::jupyter_app::set_guard_settings({config.m_shell_port, config.m_control_port,
                                        config.m_stdin_port, config.m_hb_port, config.m_iopub_port,
                                        config.m_signature_scheme, config.m_key});
  auto context = xeus::make_context<zmq::context_t>();
  xeus::xkernel kernel(config, xeus::get_user_name(), std::move(context), std::move(interpreter),
                       o4s::jupyter::make_interrupting_server,
                       std::make_unique<o4s::jupyter::History>());
  o4s::jupyter_app::close_unused_listening_fds();
  // The sockets are bound now. The worker starts while the kernel serves;
  // a worker that cannot start is said on stderr and in the error reply of
  // every request that needs it (each one tries again).
  raw->start_in_background();
  o4s::jupyter_app::start_sweeper();
  std::thread(watch_signals, set, raw).detach();
  stop_with_parent(raw);
  kernel.start();
  return 0;
}
