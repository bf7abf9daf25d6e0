// openai4s as a Jupyter kernel: xeus's interpreter interface over the C++
// kernel manager. Every message is answered by driving the manager (and,
// through it, the Python worker); nothing on the host side runs Python.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <xeus/xinterpreter.hpp>

#include "host/dispatcher.h"
#include "jupyter/stream_coalescer.h"
#include "kernel/kernel_manager.h"
#include "sandbox/sandbox_settings.h"

namespace o4s::host_hooks {
class NativeKernelHooks;
}  // namespace o4s::host_hooks

namespace o4s::jupyter {

using host_hooks::NativeKernelHooks;

struct KernelSettings {
  std::string language = "python";  // "python" or "r"
  // The R worker's argv (spec kernel.md §7.1), as the kernelspec spells it:
  // the Python CLI builds it with r_kernel.r_argv, the one definition.
  std::vector<std::string> worker_argv;
  std::string python;     // the worker's interpreter
  std::string repo_root;  // the directory holding the openai4s package
  std::string workspace;  // the worker's cwd and the dispatcher's workspace
  std::string data_dir;   // the store and artifacts; never inside the workspace
  host::HostSettings host;
  double init_timeout_s = 15.0;
  // The worker's language version as the kernelspec recorded it at install
  // (`--language-version`). With it, kernel_info is answered while the
  // worker still starts; without it, kernel_info waits for the worker.
  std::string language_version;
  // A standby worker for the next restart (kernel/standby.h).
  bool standby = true;
};

class Interpreter : public xeus::xinterpreter {
 public:
  // Cheap: start_in_background() later builds the store, dispatcher and
  // manager and starts the worker. Split so the kernel's sockets are bound
  // (xkernel's constructor) before anything slow: a client's iopub
  // subscriber that connects before the bind misses the first status
  // messages, and jupyter_client's wait_for_ready then spends a 0.2 s round
  // per miss.
  static Result<std::unique_ptr<Interpreter>> create(const KernelSettings& settings);
  // Starts the worker on a thread of its own, once, after the sockets are
  // bound. The kernel serves meanwhile: kernel_info is answered (when the
  // kernelspec named the language version), and a request that needs the
  // worker waits for it. jupyter_client's wait_for_ready spends 0.2 s
  // after its kernel_info_reply making sure iopub is quiet; the worker
  // starts inside that time instead of before it.
  void start_in_background();
  ~Interpreter() override;

  // From any thread (control channel, SIGINT watcher): never blocks. An
  // interrupt that arrives while the worker starts has nothing to stop.
  void interrupt();
  // Stops the worker (after its start finished, if it was starting); the
  // kernel process may then exit.
  void stop_worker();
  // The server's word on the execute_request about to arrive (same
  // thread): `unstored` says it is shown though xeus gets it silent
  // (message_rewrite.h).
  void note_execute(bool unstored) { next_unstored_.store(unstored); }

 private:
  Interpreter(KernelSettings settings, sandbox::SandboxSettings sandbox_settings);
  // The store, dispatcher and manager (start_worker's first step).
  Status build_host();
  // Builds the host, starts the worker and asks its language version.
  Status start_worker();
  // The first start's outcome, waiting for it if it is still running.
  Status await_start();
  bool start_finished();

  void configure_impl() override;
  nl::json execute_request_impl(int execution_counter, const std::string& code, bool silent,
                                bool store_history, nl::json user_expressions,
                                bool allow_stdin) override;
  nl::json complete_request_impl(const std::string& code, int cursor_pos) override;
  nl::json inspect_request_impl(const std::string& code, int cursor_pos, int detail_level) override;
  nl::json is_complete_request_impl(const std::string& code) override;
  nl::json kernel_info_request_impl() override;
  void shutdown_request_impl() override;

  // A worker that died (a crash, an earlier cell's os._exit) is replaced
  // before the next request; an error says why it could not be. `waited`
  // says whether the request had to wait for a start or a restart.
  Status ensure_worker(bool& waited);
  Status ensure_worker() {
    bool waited = false;
    return ensure_worker(waited);
  }
  // A one-line hint on stderr when a sandboxed cell failed to find a file
  // that exists on this machine (host/outside_sandbox_hint.h).
  void publish_sandbox_hint(const nl::json& response);
  nl::json error_reply(int execution_counter, const std::string& ename, const std::string& evalue,
                       std::vector<std::string> traceback, bool publish);
  nl::json execute_cell(int execution_counter, const std::string& code, bool silent, bool unstored,
                        bool store_history, nl::json user_expressions, bool allow_stdin);
  std::optional<nl::json> ask_worker(nl::json request);
  // Each user expression (execute_request's user_expressions) evaluated in
  // the worker to a MIME bundle or an error, as ipykernel does.
  nl::json evaluate_expressions(const nl::json& expressions);
  // The name the cell gets in its tracebacks (`<kernel:NAME>`): the count
  // the client shows for a stored cell, a name of their own for others.
  std::string cell_name(bool stored, int execution_counter);
  bool is_r() const { return settings_.language == "r"; }
  std::string language_version();
  // The banner once the worker started (or failed to), and the one a
  // kernel_info gets while it still starts.
  std::string banner(const std::string& version);
  std::string starting_banner(const std::string& version) const;
  std::string reported_version();
  bool take_pending_interrupt();
  nl::json language_info(const std::string& version) const;

  std::shared_ptr<host::HostDispatcher> dispatcher_;
  std::shared_ptr<NativeKernelHooks> hooks_;
  std::unique_ptr<kernel::KernelManager> manager_;
  KernelSettings settings_;
  sandbox::SandboxSettings sandbox_settings_;  // read once, at create()

  std::thread starter_;
  std::mutex start_mutex_;
  std::condition_variable start_done_;
  std::optional<Status> start_result_;  // set once, by the starter thread
  bool stopping_ = false;
  bool restarting_ = false;         // a request is replacing a dead worker
  bool interrupt_pending_ = false;  // an interrupt came while a start or restart ran
  std::string reported_version_;    // what kernel_info says; the worker's once known
  std::mutex executing_mutex_;
  bool executing_ = false;  // an execute_request is being served (executing_mutex_)
  std::atomic<bool> next_unstored_{false};
  int side_cells_ = 0;  // cells not stored (silent, unstored, user expressions)
  // Set when a kernel_info was answered before the worker was up.
  std::atomic<bool> served_starting_banner_{false};
  // Every cell's live stdout (stream_coalescer.h). Last, so it is
  // destroyed (its flusher joined) first.
  StreamCoalescer stdout_stream_{
      [this](const std::string& text) { publish_stream("stdout", text); }};
};

}  // namespace o4s::jupyter
