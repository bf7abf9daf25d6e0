#include "jupyter/interpreter.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <xeus/xinput.hpp>

#include "base/ascii.h"
#include "host/host_methods.h"
#include "host/outside_sandbox_hint.h"
#include "host_hooks/front_door.h"
#include "host_hooks/native_hooks.h"
#include "jupyter/cell_output.h"
#include "jupyter/early_completeness.h"
#include "jupyter/error_parts.h"
#include "jupyter/variables_comm.h"
#include "proto/frame_types.h"
#include "sandbox/kernel_sandbox.h"
#include "sandbox/sandbox_settings.h"
#include "store/store.h"

namespace o4s::jupyter {

namespace {

constexpr const char* kImplementationVersion = "0.1.0";

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

nl::json string_or(const nl::json& frame, const char* key, nl::json fallback) {
  auto it = frame.find(key);
  return it != frame.end() && !it->is_null() ? *it : fallback;
}

// The approval prompt, as every front door renders it (escaped, visibly
// cut): [y]es once / [a]lways (when offered) / [N]o; anything else is no.
host::ApprovalAnswer ask_the_user(const host::ApprovalRequest& request) {
  std::string answer = xeus::blocking_input_request(
      std::string(host::kApprovalPromptPrefix) + request.text.prompt, false);
  if (answer == host::kClientCannotAskReply) return host::ApprovalAnswer::kClientCannotAsk;
  std::string word;
  for (char c : answer) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      word += ascii::to_lower(c);
    }
  }
  if (word == "y" || word == "yes") return host::ApprovalAnswer::kOnce;
  if ((word == "a" || word == "always") && request.text.always_offered) {
    return host::ApprovalAnswer::kConversation;
  }
  return host::ApprovalAnswer::kDeny;
}

// ipykernel's way out: `exit`, `quit`, `exit()` and `quit()` ask the client
// to leave (the ask_exit payload) instead of stopping the worker.
bool asks_to_exit(const std::string& code) {
  std::string word = trimmed(code);
  std::size_t start = word.find_first_not_of(" \t\r\n");
  word = start == std::string::npos ? std::string() : word.substr(start);
  return word == "exit" || word == "quit" || word == "exit()" || word == "quit()";
}

// A user expression's value: the displayhook's bundle of its last value.
class ExpressionValue : public kernel::DisplaySink {
 public:
  Status deliver(const nl::json& bundle) override {
    if (bundle.value("execute_result", false)) {
      auto data = bundle.find("data");
      auto metadata = bundle.find("metadata");
      if (data != bundle.end() && data->is_object()) data_ = *data;
      if (metadata != bundle.end() && metadata->is_object()) metadata_ = *metadata;
    }
    return {};
  }
  nl::json reply() const {
    return nl::json{{"status", "ok"}, {"data", data_}, {"metadata", metadata_}};
  }

 private:
  nl::json data_ = nl::json::object();
  nl::json metadata_ = nl::json::object();
};

}  // namespace

Result<std::unique_ptr<Interpreter>> Interpreter::create(const KernelSettings& settings) {
  // The sandbox is the same as for any kernel: OPENAI4S_KERNEL_SANDBOX and
  // friends, read once from this process's environment. A setting that
  // does not parse stops the kernel before it serves.
  auto sandbox_settings = sandbox::settings_from_environment(kernel::current_process_environment(),
                                                             sandbox::physical_memory_bytes());
  if (!sandbox_settings) return std::move(sandbox_settings).error();
  return std::unique_ptr<Interpreter>(
      new Interpreter(settings, std::move(sandbox_settings.value())));
}

Status Interpreter::build_host() {
  const KernelSettings& settings = settings_;
  auto store = store::Store::open(settings.data_dir + "/openai4s.db");
  if (!store) return std::move(store).error();
  if (auto seeded = store.value()->seed_default_permission_rules(host::default_rules()); !seeded) {
    return std::move(seeded).error();
  }
  // One conversation frame per kernel session: conversation-scoped
  // permission rules and the audit rows of this notebook hang off it.
  store::NewFrame frame;
  frame.kind = "turn";
  frame.name = "jupyter kernel";
  auto frame_id = store.value()->new_frame(frame);
  if (!frame_id) return std::move(frame_id).error();

  auto dispatcher =
      host_hooks::front_door_dispatcher(store.value(), settings.workspace, settings.data_dir);
  host_hooks::FrontDoorKernel kernel{settings.language,  settings.workspace, settings.python,
                                     settings.repo_root, settings.data_dir,  settings.worker_argv};
  auto options = host_hooks::front_door_kernel_options(kernel, sandbox_settings_);
  options.standby = settings.standby;

  auto hooks = host_hooks::front_door_hooks(dispatcher, settings.host, frame_id.value(), options);
  auto manager = std::make_unique<kernel::KernelManager>(std::move(options), hooks, nullptr);
  {
    // Published under the lock: a stop during the start reads it to kill
    // the worker being started (stop_worker).
    std::lock_guard lock(start_mutex_);
    manager_ = std::move(manager);
  }
  dispatcher_ = std::move(dispatcher);
  hooks_ = std::move(hooks);
  return {};
}

Interpreter::Interpreter(KernelSettings settings, sandbox::SandboxSettings sandbox_settings)
    : settings_(std::move(settings)), sandbox_settings_(std::move(sandbox_settings)) {
  xeus::register_interpreter(this);
  reported_version_ = settings_.language_version;
  if (reported_version_.empty()) reported_version_ = is_r() ? "4" : "3";
}

Status Interpreter::start_worker() {
  if (auto built = build_host(); !built) return built;
  if (auto started = manager_->start(settings_.init_timeout_s); !started) return started;
  std::string version = language_version();
  std::lock_guard lock(start_mutex_);
  reported_version_ = std::move(version);
  return {};
}

void Interpreter::start_in_background() {
  if (starter_.joinable()) return;
  starter_ = std::thread([this] {
    Status started = start_worker();
    std::lock_guard lock(start_mutex_);
    // Said on stderr at once (the client's operator looks there); every
    // request that needs the worker then answers with the same reason. A
    // start that a stop cut short is no failure to report.
    if (!started && !stopping_) {
      std::fprintf(stderr, "openai4s-jupyter-kernel: %s\n", started.error().message.c_str());
    }
    start_result_ = std::move(started);
    start_done_.notify_all();
  });
}

Status Interpreter::await_start() {
  if (!starter_.joinable()) {
    return make_error(ErrorCode::kNotAlive, "the kernel's worker was never started");
  }
  std::unique_lock lock(start_mutex_);
  start_done_.wait(lock, [this] { return start_result_.has_value(); });
  if (start_result_->ok()) return {};
  return start_result_->error();  // a copy: every waiter gets the reason
}

bool Interpreter::start_finished() {
  std::lock_guard lock(start_mutex_);
  return start_result_.has_value();
}

Interpreter::~Interpreter() {
  stop_worker();
  if (starter_.joinable()) starter_.join();
}

void Interpreter::interrupt() {
  {
    // Checked and marked under the lock the waiting cell takes: an
    // interrupt is either marked before the start ends (the cell sees it)
    // or sent to the worker after.
    std::lock_guard lock(start_mutex_);
    // A dead worker not yet being replaced counts too: a cell that was
    // just sent (busy already published) has not reached ensure_worker, and
    // a signal to the dead worker would be lost.
    const bool dead = start_result_ && start_result_->ok() && manager_ && !manager_->is_alive();
    if (!start_result_ || restarting_ || dead) {
      // A cell waiting for the worker to start (or for a dead one's
      // replacement) is stopped before it runs: the user pressed stop on a
      // cell that had not begun, and no worker is there to take a signal.
      interrupt_pending_ = true;
      return;
    }
  }
  // manager_ is written by the starter thread, read only after the start
  // finished (the mutex orders the two).
  if (!manager_) return;
  std::lock_guard lock(executing_mutex_);
  (void)manager_->interrupt(/*for_next_cell=*/executing_);
}

bool Interpreter::take_pending_interrupt() {
  std::lock_guard lock(start_mutex_);
  return std::exchange(interrupt_pending_, false);
}

std::string Interpreter::reported_version() {
  std::lock_guard lock(start_mutex_);
  return reported_version_;
}

void Interpreter::stop_worker() {
  if (!starter_.joinable()) return;
  std::unique_lock lock(start_mutex_);
  stopping_ = true;
  // A stop during the start (or during a restart a request began) kills
  // the worker being started (its handshake then fails at once) instead of
  // waiting out the init timeout, and asks again until that start is over:
  // a worker spawned just after a kill found no transport yet must not be
  // left running.
  while (!start_result_ || restarting_) {
    if (manager_) manager_->kill_worker();
    start_done_.wait_for(lock, std::chrono::milliseconds(20));
  }
  lock.unlock();
  if (!manager_) return;
  manager_->shutdown();
  // Every way out of this process that follows (xeus's std::exit after a
  // shutdown_request, _Exit on SIGTERM or a gone parent) skips destructors.
  manager_->remove_host_files();
}

void Interpreter::configure_impl() {
  register_variables_comm(comm_manager(), [this](long long limit) -> Result<nl::json> {
    if (Status ready = ensure_worker(); !ready) return std::move(ready).error();
    return manager_->inspect_variables(limit);
  });
}

Status Interpreter::ensure_worker(bool& waited) {
  waited = !start_finished();
  Status first = await_start();
  // No manager: the host itself could not be built (the store did not
  // open); that does not get better by retrying.
  if (!manager_) return first;
  if (manager_->is_alive()) return {};
  {
    // A stopping kernel starts no worker: it would outlive the stop.
    std::lock_guard lock(start_mutex_);
    if (stopping_) return make_error(ErrorCode::kNotAlive, "the kernel is shutting down");
    restarting_ = true;
  }
  waited = true;
  Status restarted = manager_->restart(settings_.init_timeout_s);
  std::string version = restarted ? language_version() : std::string();
  {
    std::lock_guard lock(start_mutex_);
    restarting_ = false;
    if (!version.empty()) reported_version_ = std::move(version);
  }
  start_done_.notify_all();
  return restarted;
}

nl::json Interpreter::error_reply(int execution_counter, const std::string& ename,
                                  const std::string& evalue, std::vector<std::string> traceback,
                                  bool publish) {
  if (publish) publish_execution_error(ename, evalue, traceback);
  return nl::json{{"status", "error"},
                  {"execution_count", execution_counter},
                  {"ename", ename},
                  {"evalue", evalue},
                  {"traceback", std::move(traceback)}};
}

nl::json Interpreter::execute_request_impl(int execution_counter, const std::string& code,
                                           bool silent, bool store_history,
                                           nl::json user_expressions, bool allow_stdin) {
  // A shown but unstored cell comes silent from xeus (message_rewrite.h).
  const bool unstored = silent && next_unstored_.exchange(false);
  // An interrupt from now on is this cell's, even before its code is sent.
  {
    std::lock_guard lock(executing_mutex_);
    executing_ = true;
  }
  nl::json reply = execute_cell(execution_counter, code, silent, unstored, store_history,
                                std::move(user_expressions), allow_stdin);
  {
    // Under the lock interrupt() holds while it claims: what it kept for
    // this cell is dropped here, never left for the next one.
    std::lock_guard lock(executing_mutex_);
    executing_ = false;
    if (manager_) manager_->forget_kept_interrupt();
  }
  return reply;
}

nl::json Interpreter::execute_cell(int execution_counter, const std::string& code, bool silent,
                                   bool unstored, bool store_history, nl::json user_expressions,
                                   bool allow_stdin) {
  // An unstored cell is shown under the number the next stored cell will
  // get (as ipykernel shows it), and the count does not move.
  const bool shown = !silent || unstored;
  const int shown_count = unstored ? execution_counter + 1 : execution_counter;
  if (unstored) publish_execution_input(code, shown_count);
  if (!is_r() && asks_to_exit(code)) {
    return nl::json{{"status", "ok"},
                    {"execution_count", execution_counter},
                    {"payload", nl::json::array({{{"source", "ask_exit"}, {"keepkernel", false}}})},
                    {"user_expressions", nl::json::object()}};
  }
  // A cell that waits for the worker's start (or restart) is the one an
  // interrupt during it stops (sent before or after it entered here); a
  // cell that found its worker up only clears what an idle press left.
  bool waited_for_the_start = false;
  Status ready = ensure_worker(waited_for_the_start);
  if (take_pending_interrupt() && waited_for_the_start) {
    std::string message = "the cell was interrupted before the worker had started; it did not run";
    return error_reply(execution_counter, "KeyboardInterrupt", message,
                       {"KeyboardInterrupt: " + message}, shown);
  }
  if (!ready) {
    std::string message = "the kernel could not start a fresh worker: " + ready.error().message;
    return error_reply(execution_counter, "KernelWorkerUnavailable", message, {message}, shown);
  }
  // A client shown the banner of a starting kernel (jupyter console shows
  // it once) learns of a sandbox warning with its first cell instead.
  if (shown && served_starting_banner_.exchange(false)) {
    const auto& box = manager_->options().sandbox;
    std::string warning = box ? box->status().warning : std::string();
    if (!warning.empty()) publish_stream("stderr", warning + "\n");
  }
  CellOutput output(*this, stdout_stream_, shown_count, !shown, allow_stdin);
  // An "ask" permission becomes a prompt on the client's stdin, only while
  // a cell whose client allows stdin runs; what the cell printed before it
  // is shown first.
  if (allow_stdin) {
    hooks_->set_cell([this](const host::ApprovalRequest& request) {
      stdout_stream_.flush();
      return ask_the_user(request);
    });
  }
  auto result = manager_->execute(code, "user", std::nullopt, &output, &output, &output,
                                  cell_name(store_history && !silent, execution_counter));
  hooks_->set_cell({});
  if (!result) {
    // The worker died (or the protocol broke): this cell fails, and the
    // next request gets a fresh worker (ensure_worker above).
    output.flush();
    std::string message = result.error().message;
    if (manager_->is_alive() && result.error().code != ErrorCode::kWorkerExited) {
      manager_->kill_worker();
    }
    return error_reply(execution_counter, "KernelWorkerDied",
                       message + " (a fresh worker starts with the next cell)", {message}, shown);
  }
  const nl::json& response = result.value();
  output.finish(response);
  auto error = response.find("error");
  if (error != response.end() && error->is_string()) {
    bool interrupted = response.value("interrupted", false);
    ErrorParts parts = split_error(error->get<std::string>(), interrupted);
    nl::json reply = error_reply(execution_counter, parts.ename, parts.evalue,
                                 std::move(parts.traceback), shown);
    if (shown) publish_sandbox_hint(response);
    return reply;
  }
  return nl::json{{"status", "ok"},
                  {"execution_count", execution_counter},
                  {"payload", nl::json::array()},
                  {"user_expressions", evaluate_expressions(user_expressions)}};
}

void Interpreter::publish_sandbox_hint(const nl::json& response) {
  const auto& box = manager_->options().sandbox;
  if (!box) return;
  auto status = box->status();
  if (status.backend != "bubblewrap") return;
  // R says which file it could not open in a warning (stderr), before the
  // error; Python in the error's last line.
  std::string text = response.value("stderr", "");
  text += "\n";
  text += response.value("error", "");
  if (auto hint = host::outside_sandbox_hint(text, status.workspace))
    publish_stream("stderr", *hint);
}

std::string Interpreter::cell_name(bool stored, int execution_counter) {
  if (stored) return std::to_string(execution_counter);
  return "silent-" + std::to_string(++side_cells_);
}

nl::json Interpreter::evaluate_expressions(const nl::json& expressions) {
  nl::json values = nl::json::object();
  if (!expressions.is_object()) return values;
  for (const auto& [name, expression] : expressions.items()) {
    if (!expression.is_string()) {
      values[name] = {{"status", "error"},
                      {"ename", "TypeError"},
                      {"evalue", "a user expression must be a string"},
                      {"traceback", nl::json::array()}};
      continue;
    }
    // Evaluated as a cell of its own that shows nothing: its last value is
    // the bundle; its output goes nowhere, as ipykernel's does.
    ExpressionValue value;
    auto result = manager_->execute(expression.get<std::string>(), "user", std::nullopt, nullptr,
                                    &value, nullptr, "expression-" + std::to_string(++side_cells_));
    if (!result) {
      values[name] = {{"status", "error"},
                      {"ename", "KernelWorkerDied"},
                      {"evalue", result.error().message},
                      {"traceback", nl::json::array({result.error().message})}};
      break;
    }
    auto error = result.value().find("error");
    if (error != result.value().end() && error->is_string()) {
      ErrorParts parts = split_error(error->get<std::string>(), false);
      values[name] = {{"status", "error"},
                      {"ename", parts.ename},
                      {"evalue", parts.evalue},
                      {"traceback", parts.traceback}};
    } else {
      values[name] = value.reply();
    }
  }
  return values;
}

std::optional<nl::json> Interpreter::ask_worker(nl::json request) {
  if (!ensure_worker()) return std::nullopt;
  auto answer = manager_->worker_request(std::move(request));
  if (!answer) {
    // A worker that left the request unanswered was stopped: say so where
    // the client shows output (the next cell gets a fresh worker).
    if (answer.error().code == ErrorCode::kUnresponsive) {
      publish_stream("stderr",
                     answer.error().message + "; a fresh worker starts with the next cell\n");
    }
    return std::nullopt;
  }
  return answer.value();
}

nl::json Interpreter::complete_request_impl(const std::string& code, int cursor_pos) {
  nl::json reply{{"status", "ok"},
                 {"matches", nl::json::array()},
                 {"cursor_start", cursor_pos},
                 {"cursor_end", cursor_pos},
                 {"metadata", nl::json::object()}};
  // contracts.md's complete request; a worker without it answers nothing.
  auto answer =
      ask_worker({{"type", proto::frame::kComplete}, {"code", code}, {"cursor", cursor_pos}});
  if (!answer) return reply;
  if (auto matches = answer->find("matches"); matches != answer->end() && matches->is_array()) {
    reply["matches"] = *matches;
  }
  reply["cursor_start"] = string_or(*answer, "cursor_start", cursor_pos);
  reply["cursor_end"] = string_or(*answer, "cursor_end", cursor_pos);
  return reply;
}

nl::json Interpreter::inspect_request_impl(const std::string& code, int cursor_pos,
                                           int detail_level) {
  nl::json reply{{"status", "ok"},
                 {"found", false},
                 {"data", nl::json::object()},
                 {"metadata", nl::json::object()}};
  auto answer = ask_worker({{"type", proto::frame::kInspect},
                            {"code", code},
                            {"cursor", cursor_pos},
                            {"detail_level", detail_level}});
  if (!answer) return reply;
  reply["found"] = answer->value("found", false);
  if (auto data = answer->find("data"); data != answer->end() && data->is_object()) {
    reply["data"] = *data;
  }
  return reply;
}

nl::json Interpreter::is_complete_request_impl(const std::string& code) {
  // Answered by the worker with codeop (openai4s/kernel/runtime/code_completeness.py),
  // so the grammar is the worker's own Python's. An R kernel whose worker
  // is still starting answers from the brackets alone (early_completeness.h
  // says why not wait).
  if (is_r() && !start_finished()) return early_r_is_complete(code);
  auto answer = ask_worker({{"type", proto::frame::kIsComplete}, {"code", code}});
  if (!answer) return nl::json{{"status", "unknown"}};
  nl::json reply{{"status", answer->value("status", "unknown")}};
  if (reply["status"] == "incomplete") reply["indent"] = answer->value("indent", "");
  return reply;
}

std::string Interpreter::language_version() {
  // The worker's own interpreter, asked once: the kernel may run a
  // different Python (or R) than any on the host's PATH.
  const char* ask = is_r() ? "cat(R.version$major, R.version$minor, sep = '.')"
                           : "print(__import__('platform').python_version())";
  std::string fallback = reported_version();
  auto result = manager_->execute(ask, "system", std::nullopt, nullptr, nullptr, nullptr, "system");
  if (!result) return fallback;
  std::string version = trimmed(result.value().value("stdout", ""));
  return version.empty() ? fallback : version;
}

nl::json Interpreter::language_info(const std::string& version) const {
  if (is_r()) {
    return {{"name", "R"},
            {"version", version},
            {"mimetype", "text/x-r-source"},
            {"file_extension", ".r"},
            {"codemirror_mode", "r"},
            {"pygments_lexer", "r"}};
  }
  return {{"name", "python"},
          {"version", version},
          {"mimetype", "text/x-python"},
          {"file_extension", ".py"},
          {"codemirror_mode", {{"name", "ipython"}, {"version", 3}}},
          {"pygments_lexer", "ipython3"},
          {"nbconvert_exporter", "python"}};
}

std::string Interpreter::banner(const std::string& version) {
  std::string text = "openai4s kernel " + std::string(kImplementationVersion) + " -- " +
                     (is_r() ? "R " : "Python ") + version + "\n";
  if (!manager_) return text + "sandbox: unknown: the kernel could not start\n";
  const auto& box = manager_->options().sandbox;
  if (!box) return text + "sandbox: none\n";
  sandbox::SandboxStatus status = box->status();
  text += "sandbox: " + status.state + " (mode " + status.mode + ", backend " + status.backend +
          (status.enforced ? ", enforced" : ", not enforced") + ", network " +
          status.network_policy + ")\n";
  if (!status.warning.empty()) text += status.warning + "\n";
  text += "workspace: " + settings_.workspace + "\n";
  return text;
}

std::string Interpreter::starting_banner(const std::string& version) const {
  std::string text = "openai4s kernel " + std::string(kImplementationVersion) + " -- " +
                     (is_r() ? "R " : "Python ") + version + "\n";
  // Only what is already certain: an enforcing kernel runs no cell outside
  // the sandbox, whatever its self-test then says.
  const bool enforced = sandbox_settings_.mode == sandbox::SandboxMode::kEnforce;
  text += "sandbox: starting (mode " + std::string(sandbox::mode_name(sandbox_settings_.mode)) +
          (enforced ? ", enforced" : "") + "; a warning, if any, comes with the first cell)\n";
  text += "workspace: " + settings_.workspace + "\n";
  return text;
}

nl::json Interpreter::kernel_info_request_impl() {
  // Never waits for the worker: xeus answers control requests (interrupt,
  // shutdown) on the thread that may be asking this. The version is the
  // kernelspec's (or a bare "3"/"4") until the worker said its own.
  bool ready = start_finished();
  std::string version = reported_version();
  if (!ready) served_starting_banner_.store(true);
  return nl::json{{"status", "ok"},
                  {"protocol_version", "5.3"},
                  {"implementation", "openai4s"},
                  {"implementation_version", kImplementationVersion},
                  {"language_info", language_info(version)},
                  {"banner", ready ? banner(version) : starting_banner(version)},
                  {"help_links", nl::json::array()}};
}

void Interpreter::shutdown_request_impl() { stop_worker(); }

}  // namespace o4s::jupyter
