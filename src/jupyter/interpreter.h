// openai4s as a Jupyter kernel: xeus's interpreter interface over the C++
// kernel manager. Every message is answered by driving the manager (and,
// through it, the Python worker); nothing on the host side runs Python.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <xeus/xinterpreter.hpp>

#include "host/dispatcher.h"
#include "kernel/kernel_manager.h"

namespace o4s::jupyter {

class NativeKernelHooks;

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
};

class Interpreter : public xeus::xinterpreter {
 public:
  // Cheap: start_worker() later builds the store, dispatcher and manager
  // and starts the worker. Split so the kernel's sockets are bound (xkernel's
  // constructor) while the worker starts: a client's iopub subscriber that
  // connects before the bind misses the first status messages, and
  // jupyter_client's wait_for_ready then spends a 0.2 s round per miss.
  static Result<std::unique_ptr<Interpreter>> create(const KernelSettings& settings);
  // Starts the worker and asks its language version; before kernel.start().
  Status start_worker();
  ~Interpreter() override;

  // From any thread (control channel, SIGINT watcher): never blocks.
  void interrupt();
  // Stops the worker; the kernel process may then exit.
  void stop_worker();

 private:
  explicit Interpreter(KernelSettings settings);
  // The store, dispatcher and manager (start_worker's first step).
  Status build_host();

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
  // before the next request; an error says why it could not be.
  Status ensure_worker();
  nl::json error_reply(int execution_counter, const std::string& ename, const std::string& evalue,
                       std::vector<std::string> traceback, bool publish);
  std::optional<nl::json> ask_worker(nl::json request);
  bool is_r() const { return settings_.language == "r"; }
  std::string language_version();
  std::string banner();
  nl::json language_info() const;

  std::shared_ptr<host::HostDispatcher> dispatcher_;
  std::shared_ptr<NativeKernelHooks> hooks_;
  std::unique_ptr<kernel::KernelManager> manager_;
  KernelSettings settings_;
  std::string language_version_;
};

}  // namespace o4s::jupyter
