// Lifecycle: spawn, restart, interrupt, kill, shutdown, and the seams.
#include "kernel/kernel_manager.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>
#include <utility>

#include "base/paths.h"
#include "base/random_id.h"
#include "kernel/pipe_transport.h"
#include "kernel/standby.h"
#include "proc/signals.h"
#include "proto/frame_types.h"
#include "proto/limits.h"

namespace o4s::kernel {

namespace {

using std::chrono::milliseconds;

std::string new_authorization_generation() { return "kernel:" + uuid4(); }

// How long after a swap the next standby's start waits (a spawn costs tens
// of ms of CPU, the first cell on the new worker well under one).
constexpr std::chrono::milliseconds kStandbyAfterSwap{250};

// Spawns through the kernel's sandbox: prepare the wrapped request, spawn it
// on the supervisor thread, then let the sandbox pin, limit and prove the
// worker before anything is sent to it. On failure the transport is dropped,
// which kills and reaps the whole spawned group.
// A standby's outcome is not adopted here: it goes to `pending` until the
// standby replaces the running worker, whose pin stays meanwhile.
Result<std::unique_ptr<PipeTransport>> start_sandboxed(
    const std::shared_ptr<sandbox::KernelSandbox>& sandbox, const sandbox::LaunchSpec& spec,
    std::optional<sandbox::LaunchOutcome>* pending) {
  sandbox::KernelSandbox& box = *sandbox;
  auto prepared = box.prepare(spec, pending == nullptr);
  if (!prepared) return std::move(prepared).error();
  auto started = PipeTransport::start(prepared.value()->request());
  if (!started) return started;
  proc::ChildProcess& child = started.value()->child();
  std::shared_ptr<proc::StderrTail> tail = started.value()->tail();
  sandbox::SpawnedLauncher spawned{child.pid(), child.pidfd(), [&child, tail] {
                                     child.wait_exit(milliseconds(1000));
                                     for (int i = 0; i < 250 && !tail->closed(); ++i) {
                                       std::this_thread::sleep_for(milliseconds(2));
                                     }
                                     return tail->text();
                                   }};
  auto outcome = prepared.value()->finish(spawned);
  if (!outcome) return std::move(outcome).error();
  if (pending) {
    *pending = std::move(outcome.value());
  } else {
    box.adopt(std::move(outcome.value()));
  }
  // A worker busy in a cell when the kernel closes gets its SIGINT where an
  // interrupt() would put it: the cell stops and the worker leaves through
  // its own shutdown path. The pin is this worker's until the next start,
  // and close() always runs before a restart spawns the next one.
  started.value()->route_stop_signal([weak = std::weak_ptr<sandbox::KernelSandbox>(sandbox)] {
    auto alive = weak.lock();
    return alive && alive->interrupt(SIGINT).has_value();
  });
  return started;
}

// A read path under a hidden directory the workspace shows (a data
// directory inside the workspace) would need its mount point inside that
// directory's read-only mask: it stays hidden with it.
bool hidden_with_the_store(const std::string& path, const std::string& workspace,
                           const std::vector<std::string>& hidden_paths) {
  auto resolved = real_path(path);
  auto shown = real_path(workspace);
  if (!resolved || !shown) return true;
  for (const auto& hidden : hidden_paths) {
    auto masked = real_path(hidden);
    if (masked && path_contains(*shown, *masked) && path_contains(*masked, *resolved)) return true;
  }
  return false;
}

}  // namespace

EnvironmentRequest child_environment_request(const KernelOptions& options,
                                             const std::string& authorization_generation,
                                             EnvMap source) {
  EnvironmentRequest request;
  request.source = std::move(source);
  request.mode = options.mode;
  request.cwd = options.cwd;
  request.env_root = options.env_root;
  request.env_name = options.env_name;
  request.kernel_generation = authorization_generation;
  request.repo_root = options.repo_root;
  request.default_repo_root = options.repo_root;
  if (!options.argv) request.interpreter = options.python;
  return request;
}

KernelManager::KernelManager(KernelOptions options, std::shared_ptr<KernelHooks> hooks,
                             std::shared_ptr<TransportFactory> factory)
    : options_(std::move(options)),
      hooks_(std::move(hooks)),
      factory_(std::move(factory)),
      authorization_generation_(new_authorization_generation()) {
  // Made here, not at the first request: other threads (a server's limit
  // count, its memory report) read standby_ while the kernel starts.
  if (options_.standby) {
    standby_ = std::make_unique<StandbySlot>([this] { return start_standby(); });
  }
}

KernelManager::~KernelManager() {
  // The standby thread uses this manager: it stops first.
  standby_.reset();
  if (retiring_.joinable()) retiring_.join();
  close_transport();
}

std::string KernelManager::authorization_generation() const {
  std::lock_guard lock(state_);
  return authorization_generation_;
}

std::shared_ptr<Transport> KernelManager::transport() const {
  std::lock_guard lock(state_);
  return transport_;
}

std::vector<std::string> KernelManager::worker_log_tail() const {
  std::lock_guard lock(state_);
  return {worker_log_tail_.begin(), worker_log_tail_.end()};
}

void KernelManager::remember_log(const std::string& message) {
  std::lock_guard lock(state_);
  worker_log_tail_.push_back(message.substr(0, proto::kWorkerLogEntryChars));
  while (worker_log_tail_.size() > proto::kWorkerLogTailEntries) worker_log_tail_.pop_front();
}

Status KernelManager::store_apart_from_workspace() const {
  std::error_code ec;
  const std::string workspace =
      options_.cwd ? resolve_path(*options_.cwd) : std::filesystem::current_path(ec).string();
  for (const auto& hidden : options_.hidden_paths) {
    auto a = real_path(hidden);
    auto b = real_path(workspace);
    if (a && b && a.value() == b.value()) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the dispatcher's data directory " + a.value() +
                            " is the kernel's workspace " + b.value() +
                            ": a cell could rewrite the audit log and its own permissions; "
                            "choose a data directory outside the workspace");
    }
  }
  return {};
}

Result<std::shared_ptr<Transport>> KernelManager::spawn_transport(
    std::optional<EnvMap> environment) {
  if (factory_) return factory_->make();
  if (Status apart = store_apart_from_workspace(); !apart) return std::move(apart).error();
  proc::SpawnRequest request;
  if (options_.argv) {
    request.argv = *options_.argv;
  } else {
    request.argv = {options_.python, "-u", options_.worker_script};
  }
  // A warm worker is spawned with no generation: it is told one at its
  // adoption (bind_generation), so none it could see before serves a kernel.
  EnvMap env = build_kernel_environment(child_environment_request(
      options_, spawns_warm_ ? std::string() : authorization_generation(),
      environment ? std::move(*environment) : current_process_environment()));
  if (!options_.argv) env[kWorkerMallocTunablesName] = kWorkerMallocTunables;
  // Where the worker finds the workspace's active host.env at its first
  // cell (set after the allowlist, so no source can point it elsewhere):
  // read then, not now, so a standby started before an env.use still
  // starts its first cell in the chosen environment.
  if (!options_.read_paths.empty()) env[kEnvLibraryName] = options_.read_paths.front();
  request.env = to_envp(env);
  request.cwd = options_.cwd;
  if (!options_.sandbox) {
    auto started = PipeTransport::start(request);
    if (!started) return std::move(started).error();
    return std::shared_ptr<Transport>(std::move(started.value()));
  }
  sandbox::LaunchSpec spec;
  if (options_.capture_sinks) {
    auto sinks = sink_directory();
    if (!sinks) return std::move(sinks).error();
    spec.host_exchange_dirs.push_back(sinks.value()->path());
  }
  // Absolute but unresolved: the launcher resolves it itself, refusing the
  // symlinks a sandbox could have left on the way (a root daemon's rule).
  spec.workspace =
      options_.cwd ? absolute_path(*options_.cwd) : std::filesystem::current_path().string();
  spec.hidden_paths = options_.hidden_paths;
  // What the worker runs from is readable (never writable) inside.
  spec.runtime_paths = {proc::resolve_program(request.argv.front(), request.env),
                        options_.repo_root};
  if (!options_.argv) spec.runtime_paths.push_back(options_.worker_script);
  if (options_.env_root) spec.runtime_paths.push_back(*options_.env_root);
  for (const auto& path : options_.read_paths) {
    if (!hidden_with_the_store(path, spec.workspace, spec.hidden_paths)) {
      spec.runtime_paths.push_back(path);
    }
  }
  spec.request = std::move(request);
  auto started =
      start_sandboxed(options_.sandbox, spec, spawns_standby_ ? &pending_launch_ : nullptr);
  if (!started) return std::move(started).error();
  return std::shared_ptr<Transport>(std::move(started.value()));
}

Result<SinkDirectory*> KernelManager::sink_directory() {
  if (!sink_directory_) {
    auto made = SinkDirectory::create();
    if (!made) return std::move(made).error();
    sink_directory_ = std::move(made.value());
  }
  return sink_directory_.get();
}

Status KernelManager::start(double init_timeout_s, std::optional<EnvMap> environment) {
  const bool standby = options_.standby && !factory_;
  // The standby is spawned with the same environment, later, on its own
  // thread (where reading the live environment would race an embedder's
  // setenv): taken here, on the caller's thread.
  if (standby && !environment) environment = current_process_environment();
  std::optional<EnvMap> for_standby = standby ? environment : std::nullopt;
  auto transport = spawn_transport(std::move(environment));
  if (!transport) return std::move(transport).error();
  {
    std::lock_guard lock(state_);
    transport_ = transport.value();
  }
  // Only a Python worker speaks the attestation handshake.
  if (!options_.argv) {
    if (Status done = handshake(transport.value(), init_timeout_s); !done) return done;
  }
  if (standby) request_standby(std::move(for_standby));
  return {};
}

Result<WarmWorker> KernelManager::start_warm(KernelOptions options, double init_timeout_s,
                                             std::optional<EnvMap> environment) {
  options.standby = false;
  KernelManager holder(std::move(options), nullptr, nullptr);
  holder.spawns_warm_ = true;
  if (Status started = holder.start(init_timeout_s, std::move(environment)); !started) {
    return std::move(started).error();
  }
  if (Status ready = holder.await_main_loop(); !ready) return std::move(ready).error();
  return holder.release_worker();
}

WarmWorker KernelManager::release_worker() {
  WarmWorker worker;
  {
    std::lock_guard lock(state_);
    worker.transport = std::exchange(transport_, nullptr);
  }
  worker.workspace = options_.cwd;
  worker.sandbox = options_.sandbox;
  worker.sinks = std::move(sink_directory_);
  worker.pending_launch = std::exchange(pending_launch_, std::nullopt);
  return worker;
}

Result<WarmWorker> KernelManager::start_standby() {
  if (options_.standby_room && !options_.standby_room()) {
    return make_error(ErrorCode::kBusy, "no room for a standby within the worker limit");
  }
  KernelOptions options = options_;
  options.standby = false;
  KernelManager holder(std::move(options), nullptr, nullptr);
  holder.spawns_standby_ = true;
  holder.spawns_warm_ = true;
  std::optional<EnvMap> environment;
  {
    std::lock_guard lock(state_);
    environment = standby_environment_;
  }
  if (Status started = holder.start(options_.idle_reply_timeout_s, std::move(environment));
      !started) {
    return std::move(started).error();
  }
  if (Status ready = holder.await_main_loop(); !ready) return std::move(ready).error();
  // The room may have gone to a kernel or a job while this one started.
  if (options_.standby_room && !options_.standby_room()) {
    // Only this worker goes: the holder's shutdown would retire the
    // sandbox the kernel's own worker runs in.
    holder.release_worker().discard();
    return make_error(ErrorCode::kBusy, "no room for a standby within the worker limit");
  }
  return holder.release_worker();
}

void KernelManager::request_standby(std::optional<EnvMap> environment,
                                    std::chrono::milliseconds after) {
  {
    std::lock_guard lock(state_);
    if (environment) standby_environment_ = std::move(environment);
  }
  if (!standby_) standby_ = std::make_unique<StandbySlot>([this] { return start_standby(); });
  standby_->request(after);
}

bool KernelManager::wait_standby() { return standby_ && standby_->wait_ready(); }

std::optional<pid_t> KernelManager::standby_pid() {
  return standby_ ? standby_->ready_pid() : std::nullopt;
}

bool KernelManager::holds_standby() { return standby_ && standby_->held(); }

bool KernelManager::give_up_standby() { return standby_ && standby_->give_up_ready(); }

void KernelManager::install_worker(WarmWorker worker) {
  if (worker.pending_launch && options_.sandbox) {
    options_.sandbox->adopt_standby(std::move(*worker.pending_launch));
  }
  if (worker.sinks) sink_directory_ = std::move(worker.sinks);
  std::lock_guard lock(state_);
  transport_ = std::move(worker.transport);
}

Status KernelManager::await_main_loop() {
  // The fence names no cell: every worker answers it, with an error text.
  auto answered = request_stdout("warm-" + uuid4());
  if (!answered && !is_alive()) return std::move(answered).error();
  return {};
}

// Not answered (a round trip would be most of a claim's cost): the worker
// reads its frames in order, so the generation is in its environment before
// any later request runs. It fails closed: a worker that ignored the frame
// presents a generation the host does not trust, and its bash is refused.
Status KernelManager::bind_generation() {
  return send(Json{{"type", proto::frame::kAdopt}, {"generation", authorization_generation()}});
}

Status KernelManager::adopt(WarmWorker worker, std::optional<EnvMap> environment) {
  if (!worker.alive()) {
    worker.discard();
    return make_error(ErrorCode::kNotAlive, "the warm worker to adopt is not alive");
  }
  install_worker(std::move(worker));
  {
    auto transaction = idle_transaction();
    if (!transaction) return std::move(transaction).error();
    // A fresh generation, drawn now: the claim's, never the spawn's.
    {
      std::lock_guard lock(state_);
      authorization_generation_ = new_authorization_generation();
    }
    if (Status bound = bind_generation(); !bound) return bound;
  }
  if (options_.standby && !factory_) {
    request_standby(environment ? std::move(environment) : current_process_environment());
  }
  return {};
}

Status KernelManager::restart(double init_timeout_s, std::optional<EnvMap> environment) {
  if (factory_) {
    return make_error(
        ErrorCode::kUnsupported,
        "this worker cannot be respawned in place: it dialled in from elsewhere, so a "
        "new one has to be placed and dial back in. Recover the session (a new "
        "epoch) instead of restarting its kernel.");
  }
  std::unique_lock transaction(transaction_, std::try_to_lock);
  // A standby that died while waiting is dropped here (take), not used.
  std::optional<WarmWorker> standby;
  if (transaction.owns_lock() && standby_) standby = standby_->take();
  if (standby) {
    // Idle, with a standby ready: the old worker is told to shut down and
    // its exit is awaited in the background while the standby takes over.
    retire_in_background(transport());
  } else {
    // Close first, without the transaction lock: a cell still running gets
    // end of stream and returns, which is what frees the lock for the respawn.
    if (transaction.owns_lock()) transaction.unlock();
    if (auto old = transport()) (void)old->close(true);
    transaction.lock();
    if (standby_) standby = standby_->take();
  }
  std::string ended;
  {
    std::lock_guard lock(state_);
    ended = std::exchange(authorization_generation_, new_authorization_generation());
  }
  // Revoked before the new worker can make a call: its predecessor's
  // outstanding capabilities are never usable by it.
  if (hooks_) hooks_->generation_ended(ended);
  Status started;
  if (standby) {
    install_worker(std::move(*standby));
    started = bind_generation();
    // The next standby's spawn waits a moment: the caller's first cell on
    // the swapped-in worker is what a restart is timed by.
    request_standby(std::move(environment), kStandbyAfterSwap);
  } else {
    started = start(init_timeout_s, std::move(environment));
  }
  if (!started) {
    Error error = std::move(started).error();
    error.message =
        "the old kernel was cleared but its replacement could not start: " + error.message;
    error.code = ErrorCode::kRestartFailed;
    return error;
  }
  generation_.fetch_add(1);
  if (!is_alive()) {
    return make_error(ErrorCode::kRestartFailed,
                      "the restarted worker is not alive: its process failed to start or exited "
                      "immediately");
  }
  return {};
}

bool KernelManager::is_alive() {
  auto t = transport();
  return t && t->alive();
}

void KernelManager::kill_worker() {
  if (auto t = transport()) t->kill();
}

void KernelManager::retire_in_background(std::shared_ptr<Transport> old) {
  if (retiring_.joinable()) retiring_.join();
  if (!old) return;
  // Its close ladder's SIGINT rung must not reach the sandbox's pin, which
  // is the standby's from now on: the launcher process gets it instead.
  if (auto* pipe = dynamic_cast<PipeTransport*>(old.get())) pipe->route_stop_signal(nullptr);
  retiring_ = std::thread([old = std::move(old)] {
    if (!old->close(true)) old->kill();
  });
}

void KernelManager::shutdown() {
  if (standby_) standby_->stop();
  if (retiring_.joinable()) retiring_.join();
  close_transport();
  // The worker is gone: its sandbox's envelope and uid go with it.
  if (options_.sandbox) options_.sandbox->retire();
  if (hooks_) hooks_->generation_ended(authorization_generation());
}

void KernelManager::remove_host_files() {
  if (sink_directory_) sink_directory_->remove();
}

void KernelManager::close_transport() {
  std::shared_ptr<Transport> t;
  {
    std::lock_guard lock(state_);
    t = transport_;
  }
  if (!t) return;
  if (!t->close(true)) t->kill();
}

void KernelManager::send_interrupt_frame(std::uint64_t seq) {
  // A peer of the caller's own (an overridden send or readline) was never
  // told of this frame; the signal alone is its interrupt.
  if (hooks_ && (hooks_->overridden(KernelHooks::Seam::kSend) ||
                 hooks_->overridden(KernelHooks::Seam::kReadline))) {
    return;
  }
  // Best effort: a worker that cannot take it is dead or dying, and the
  // signal (or its absence) says the rest. Never a wait: a worker that does
  // not read its input (a full pipe, a reply write stuck on it) would
  // otherwise keep the signal from it, the one way out of such a cell.
  if (auto t = transport()) {
    (void)t->offer_line(
        proto::encode_frame(Json{{"type", proto::frame::kInterrupt}, {"seq", seq}}));
  }
}

Result<InterruptDelivery> KernelManager::interrupt(bool for_next_cell) {
  interrupts_.fetch_add(1);  // a host call in progress stops (host_call.cpp)
  // Before the signal: one that finds the cell not yet armed leaves this
  // frame to stop it (kernel/cell_interrupts.h).
  if (auto seq = cell_interrupts_.claim(for_next_cell)) send_interrupt_frame(*seq);
  auto t = transport();
  if (!t) return InterruptDelivery{false, "local-process", "the kernel has no worker"};
  auto pid = t->local_pid();
  if (!pid) {
    if (t->interrupt()) return InterruptDelivery{true, "transport", std::nullopt};
    return make_error(ErrorCode::kUnsupported,
                      "no way to interrupt this worker: it is remote and no signal delivery was "
                      "configured for its allocation");
  }
  // A sandboxed worker is not the spawned process: the sandbox owns delivery
  // to its pinned main thread (spec kernel.md §5.8 step 2).
  if (options_.sandbox) {
    if (auto sent = options_.sandbox->interrupt(SIGINT)) {
      return InterruptDelivery{sent->delivered, "sandbox", sent->gap};
    }
  }
  if (!t->alive())
    return InterruptDelivery{false, "local-process", "the worker had already exited"};
  // Exactly one signal per call, aimed at the main thread (see signals.h).
  if (proc::signal_main_thread(*pid, SIGINT)) {
    return InterruptDelivery{true, "local-process", std::nullopt};
  }
  if (::kill(*pid, SIGINT) != 0) {
    return InterruptDelivery{false, "local-process", system_error("kill", errno).message};
  }
  return InterruptDelivery{true, "local-process", std::nullopt};
}

Result<std::optional<Json>> KernelManager::native_readline() {
  auto t = transport();
  if (!t) return std::optional<Json>();
  for (;;) {
    auto line = t->read_line();
    if (!line) {
      if (line.error().code != ErrorCode::kProtocol) return std::move(line).error();
      malformed_frames_.fetch_add(1);
      remember_log("host dropped a worker frame: " + line.error().message);
      continue;
    }
    if (!line->has_value()) return std::optional<Json>();
    auto frame = proto::decode_frame(**line);
    if (!frame) {
      // A worker that printed past its protocol discipline must not take the
      // reader down: count it, say so, and keep the stream aligned.
      malformed_frames_.fetch_add(1);
      remember_log("host dropped a malformed worker frame (not JSON)");
      continue;
    }
    return std::optional<Json>(std::move(frame.value()));
  }
}

Status KernelManager::native_send(const Json& frame) {
  return write_raw(proto::encode_frame(frame));
}

Status KernelManager::write_raw(std::string_view text) {
  auto t = transport();
  if (!t) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");
  Status written = t->write_line(text);
  if (written || written.error().sys_errno != EPIPE) return written;
  // The worker's end of its input is closed: nearly always because it died
  // (a SIGKILL between its host call and our reply) and its exit is not
  // reported yet. Said as a read would say it, once the exit shows; a worker
  // that closed its protocol input and lives on keeps the pipe error.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (t->alive() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!t->alive()) return worker_died_error();
  return written;
}

Result<std::optional<Json>> KernelManager::readline() {
  if (hooks_ && hooks_->overridden(KernelHooks::Seam::kReadline))
    return hooks_->readline_override();
  return native_readline();
}

Status KernelManager::send(const Json& frame) {
  if (hooks_ && hooks_->overridden(KernelHooks::Seam::kSend)) return hooks_->send_override(frame);
  return native_send(frame);
}

Status KernelManager::service_host_call(const Json& frame) {
  if (hooks_ && hooks_->overridden(KernelHooks::Seam::kServiceHostCall)) {
    return hooks_->service_host_call_override(frame);
  }
  return native_service_host_call(frame);
}

}  // namespace o4s::kernel
