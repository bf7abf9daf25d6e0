// The kernel manager: owns one worker, is its only frame reader, and drives
// execute / inspect_variables / host calls / interrupt / restart / shutdown
// (spec kernel.md §3 and §5). Every request gets exactly one terminal reply.
// Its frames are read in one loop (await_frames, kernel/frame_loop.cpp),
// routed by type (kernel/frame_route.h) to the request that waits for them.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "kernel/cell_interrupts.h"
#include "kernel/environment.h"
#include "kernel/kernel_hooks.h"
#include "kernel/reply_watchdog.h"
#include "kernel/sink_capture.h"
#include "kernel/streamed_stdout.h"
#include "kernel/transport.h"
#include "kernel/warm_worker.h"
#include "sandbox/kernel_sandbox.h"

namespace o4s::kernel {

class CellWait;
class StandbySlot;
class FrameWait;
class OomWatch;
enum class FrameKind;

// Long enough that a slow answer on a loaded machine (a first jedi import, an
// R help page) never costs the user their namespace; short enough that a
// silent worker never freezes a prompt for good.
inline constexpr double kDefaultIdleReplyTimeoutS = 30.0;

// The worker's variable naming the host.env library (issue 30).
inline constexpr const char* kEnvLibraryName = "OPENAI4S_ENV_LIBRARY";

struct KernelOptions {
  std::optional<std::string> cwd;
  std::string mode = "repl";
  std::string python;  // the worker's interpreter
  std::optional<std::string> env_root;
  std::optional<std::string> env_name;
  std::optional<std::vector<std::string>> argv;  // a non-Python worker (R)
  std::string worker_script;                     // absolute path of worker.py
  std::string repo_root;                         // parent of the openai4s package
  // The kernel's OS sandbox, kept across restarts; null spawns the worker
  // directly (as the C++ tests' fakes do).
  std::shared_ptr<sandbox::KernelSandbox> sandbox;
  // Host state the worker must never reach (the dispatcher's data
  // directory: its database and artifacts). One equal to the workspace is
  // refused; one inside it is hidden by the sandbox.
  std::vector<std::string> hidden_paths;
  // Host directories the worker reads but never writes, bound at the same
  // path (the workspace's host.env library: installs land there while the
  // kernel runs, and it imports them at once). The first is named to the
  // worker as kEnvLibraryName: it restores the active environment from it.
  std::vector<std::string> read_paths;
  // Cell output arrives through per-cell fifos the host drains (the R
  // worker, spec §7.4) instead of as stdout_chunk frames.
  bool capture_sinks = false;
  // The cell's last value comes back as a display bundle marked
  // `execute_result` instead of as text on stdout (a Jupyter client shows
  // an Out[n] for it). The Python API keeps the text: the acceptance suite
  // pins a cell's stdout.
  bool last_value_as_result = false;
  // How long an idle request (complete, inspect, is_complete, variables, a
  // stdout resend) may wait for its answer. A worker silent past it is
  // stopped as one that broke the protocol: no front door waits forever.
  double idle_reply_timeout_s = kDefaultIdleReplyTimeoutS;
  // Keep one standby worker for this kernel's workspace, started in the
  // background after each start or restart, so restart() swaps it in
  // (kernel/standby.h). It is spawned with the environment of the last
  // start, and counts against the sandbox's limits like the worker.
  bool standby = false;
  // Asked on the standby thread before each standby start, which counts
  // itself as held: false leaves the kernel without one for now (its
  // owner's worker limit is full). Empty: always room.
  std::function<bool()> standby_room;
};

// build_kernel_environment's arguments for this kernel (spec §5.12): a Python
// worker's interpreter leads PATH, an argv worker's does not.
EnvironmentRequest child_environment_request(const KernelOptions& options,
                                             const std::string& authorization_generation,
                                             EnvMap source);

struct InterruptDelivery {
  bool delivered = false;
  std::string target;
  std::optional<std::string> reason;
};

class KernelManager {
 public:
  KernelManager(KernelOptions options, std::shared_ptr<KernelHooks> hooks,
                std::shared_ptr<TransportFactory> factory);
  ~KernelManager();
  KernelManager(const KernelManager&) = delete;
  KernelManager& operator=(const KernelManager&) = delete;

  // Spawns the worker and runs the attestation handshake.
  // `environment` is the source for the worker's allowlisted environment;
  // by default the live process environment. An embedder whose other
  // threads may setenv() concurrently (CPython holds the GIL for that)
  // passes a snapshot taken under its own lock instead.
  Status start(double init_timeout_s, std::optional<EnvMap> environment = std::nullopt);
  // `cell_name` names the cell in its tracebacks (`<kernel:NAME>`; a
  // front door passes the number its client shows); empty: the worker
  // numbers cells itself.
  Result<Json> execute(const std::string& code, const std::string& origin,
                       const std::optional<std::string>& cell_id, ChunkSink* on_chunk,
                       DisplaySink* on_display = nullptr, InputSource* on_input = nullptr,
                       const std::string& cell_name = {});
  // A one-frame request/answer exchange with an idle worker (is_complete,
  // complete, inspect: answered by a frame of type request type + "_reply"
  // with the same id). A worker that does not know the request answers
  // nothing, so a fence (a stdout_request for an id no cell has) follows it:
  // the fence's answer arriving first means "unsupported" (nullopt). Fails
  // Busy instead of waiting, like inspect_variables.
  Result<std::optional<Json>> worker_request(Json request);
  // limit validated by the caller's type check; range checked here.
  Result<Json> inspect_variables(long long limit);
  // Completion and help at `cursor` (a code point index of `code`); idle
  // only, Busy while a transaction runs. The worker never runs user code
  // for either. Replies without their type and id.
  Result<Json> complete(const std::string& code, long long cursor);
  Result<Json> inspect_code(const std::string& code, long long cursor, int detail_level);
  // Never takes the transaction lock: callable from any thread, including
  // the dispatcher running inside execute. Stops the cell being executed,
  // even one whose code has not started yet (kernel/cell_interrupts.h).
  // With no cell under way it stops nothing, unless `for_next_cell` (the
  // caller knows one is on its way) or an execute() call is waiting.
  Result<InterruptDelivery> interrupt(bool for_next_cell = false);
  // Drops an interrupt kept for a next cell that will not come.
  void forget_kept_interrupt() { cell_interrupts_.forget_kept(); }
  void kill_worker();
  Status restart(double init_timeout_s, std::optional<EnvMap> environment = std::nullopt);
  // A worker started ahead of any kernel with these options (their
  // workspace and sandbox), for a pool (kernel/warm_pool.h).
  static Result<WarmWorker> start_warm(KernelOptions options, double init_timeout_s,
                                       std::optional<EnvMap> environment = std::nullopt);
  // Takes a warm worker started with this manager's options as its first
  // worker, instead of start(). `environment` is for the standby, if any.
  Status adopt(WarmWorker worker, std::optional<EnvMap> environment = std::nullopt);
  // Blocks until the standby being started is ready (true) or its start
  // failed; false at once without standby. For tests and benches.
  bool wait_standby();
  // The ready standby's process, if there is one (its memory is reported).
  std::optional<pid_t> standby_pid();
  // Whether a standby is ready or being started (it counts as a worker).
  bool holds_standby();
  // Discards a ready standby to make room for another kernel's worker; the
  // next restart then starts normally. False when none was ready.
  bool give_up_standby();
  void shutdown();
  // After shutdown(), in a process about to leave without destructors:
  // removes what the destructor would have (the R worker's sink directory).
  void remove_host_files();
  bool is_alive();

  // The seams' native implementations (what runs when nothing overrides them).
  Result<std::optional<Json>> native_readline();
  Status native_send(const Json& frame);
  Status native_service_host_call(const Json& frame);
  // Whose the files the host writes for the worker are (host_call.cpp).
  WorkerFiles worker_files() const;
  // Raw protocol write, for the Popen-like stdin the suite writes garbage to.
  Status write_raw(std::string_view text);
  void send_interrupt_frame(std::uint64_t seq);
  // True (and logged) when the worker leaves more than kInputBacklogBytes
  // of replies unread: `what` then goes unanswered.
  bool replies_unread(std::string_view what);

  int generation() const { return generation_.load(); }
  std::string authorization_generation() const;
  std::vector<std::string> worker_log_tail() const;
  std::size_t stale_stdout_chunks() const { return stale_stdout_chunks_.load(); }
  // Responses whose declared stdout stream did not match the chunks held
  // (the text was asked for again).
  std::size_t mismatched_streams() const { return mismatched_streams_.load(); }
  // stdout_chunk frames of the current cell dropped past the per-cell bound.
  std::size_t dropped_stdout_chunks() const { return dropped_stdout_chunks_.load(); }
  std::size_t malformed_frames() const { return malformed_frames_.load(); }
  std::size_t stale_responses() const { return stale_responses_.load(); }
  // Display frames of another (finished) cell, dropped.
  std::size_t stale_displays() const { return stale_displays_.load(); }
  std::shared_ptr<Transport> transport() const;
  const KernelOptions& options() const { return options_; }
  bool uses_factory() const { return factory_ != nullptr; }

 private:
  Result<std::shared_ptr<Transport>> spawn_transport(std::optional<EnvMap> environment);
  // The spawned worker, handed over to a WarmWorker (this manager keeps
  // none). Used on a manager that only started it.
  WarmWorker release_worker();
  // Installs a warm worker as this manager's transport.
  void install_worker(WarmWorker worker);
  // A warm worker is ready once its main loop answers (a stdout_request
  // fence), not when its handshake is done: what it sets up after the
  // handshake (about 10 ms of CPU) then runs before the claim, not in the
  // claimed kernel's first cell. An R worker has no handshake at all.
  Status await_main_loop();
  // Tells the installed warm worker the current authorization generation
  // (an adopt frame); the transaction lock is the caller's.
  Status bind_generation();
  // Starts this kernel's next standby (on the standby thread).
  Result<WarmWorker> start_standby();
  void request_standby(std::optional<EnvMap> environment,
                       std::chrono::milliseconds after = std::chrono::milliseconds(0));
  // Closes a replaced idle worker on its own thread (joined by the next
  // one, shutdown and the destructor).
  void retire_in_background(std::shared_ptr<Transport> old);
  Status handshake(const std::shared_ptr<Transport>& transport, double timeout_s);
  Result<std::optional<Json>> readline();
  Status send(const Json& frame);
  Status service_host_call(const Json& frame);
  Error worker_died_error();
  // Refuses a hidden path (the dispatcher's store) that is the workspace.
  Status store_apart_from_workspace() const;
  // shutdown() without telling the embedder (the destructor's, when the
  // embedder may already be gone).
  void close_transport();
  void remember_log(const std::string& message);
  // The one frame loop: reads the worker's frames until `wait` has its
  // answer or fails (kernel/frame_wait.h).
  Result<Json> await_frames(FrameWait& wait);
  // Sends `request`, then await_frames (a send failure past the wait's
  // bound reads as the bound's error).
  Result<Json> send_and_await(const Json& request, FrameWait& wait);
  // What the loop does with a frame the waiting request judged stale, or
  // left to the manager's standing duties.
  void count_stale(FrameKind kind, const Json& frame);
  Status standing_duty(FrameKind kind, const Json& frame, FrameWait& wait);
  Status serve_host_call(const Json& frame, FrameWait& wait);
  Status answer_input(const Json& frame, FrameWait& wait);

  // The execute transaction's steps.
  Json execute_request(const std::string& code, const std::string& origin,
                       const std::string& cell_id, const std::string& cell_name) const;
  // The cell's sink capture (R), its fifos named in `request`; null without.
  Result<std::unique_ptr<CellCapture>> open_cell_capture(Json& request);
  Result<Json> finish_cell(CellWait& cell, Json frame, const OomWatch& oom_watch);
  Result<Json> finalise_response(Json response, const std::vector<StreamedChunk>& chunks,
                                 const std::string& cell_id, bool sidecar_event);
  // The response's stdout spelled by the streamed chunks (spec §3.8).
  Status fill_streamed_stdout(Json& response, const std::vector<StreamedChunk>& chunks,
                              const std::string& cell_id);
  // The worker's captured stdout of `cell_id` (after a declared stream did
  // not add up), or an error if the worker cannot say.
  Result<std::string> request_stdout(const std::string& cell_id);
  // The sink directory, made on first use and kept across restarts.
  Result<SinkDirectory*> sink_directory();
  // The transaction lock of an idle request: Busy instead of waiting.
  Result<std::unique_lock<std::timed_mutex>> idle_transaction();
  // One idle request/reply transaction (complete, inspect): Busy instead of
  // waiting, the reply matched by type and id.
  Result<Json> idle_request(Json request, std::string_view reply_type, const std::string& what);
  // Starts the idle bound for one request (see KernelOptions).
  ArmedReply arm_reply_bound();
  // The error of a request whose bound passed: the worker was stopped.
  Error unanswered_error(const std::string& what);

  const KernelOptions options_;
  const std::shared_ptr<KernelHooks> hooks_;
  const std::shared_ptr<TransportFactory> factory_;

  ReplyWatchdog reply_watchdog_;
  std::unique_ptr<SinkDirectory> sink_directory_;  // set once, at the first spawn
  std::timed_mutex transaction_;                   // one reader, one request outstanding
  mutable std::mutex state_;                       // guards transport_, generation id, log tail
  std::shared_ptr<Transport> transport_;
  std::string authorization_generation_;
  std::deque<std::string> worker_log_tail_;
  std::atomic<int> generation_{0};
  std::atomic<std::size_t> stale_stdout_chunks_{0};
  std::atomic<std::size_t> mismatched_streams_{0};
  std::atomic<std::size_t> malformed_frames_{0};
  std::atomic<std::size_t> dropped_stdout_chunks_{0};
  std::atomic<std::size_t> stale_responses_{0};
  std::atomic<std::size_t> stale_displays_{0};
  // interrupt() calls so far: a host call being serviced stops when it moves.
  std::atomic<std::uint64_t> interrupts_{0};
  CellInterrupts cell_interrupts_;
  // A standby being started: its launch leaves the sandbox's pin alone.
  bool spawns_standby_ = false;
  // A warm worker (a pool's or a standby) being started: spawned without a
  // generation, it learns one when adopted (bind_generation).
  bool spawns_warm_ = false;
  std::optional<sandbox::LaunchOutcome> pending_launch_;  // the standby's, until adopted
  std::optional<EnvMap> standby_environment_;             // guarded by state_
  std::unique_ptr<StandbySlot> standby_;
  std::thread retiring_;
};

}  // namespace o4s::kernel
