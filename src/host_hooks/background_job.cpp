#include "host_hooks/background_job.h"

#include <algorithm>
#include <ctime>

#include "base/scope_exit.h"
#include "base/utc_time.h"
#include "base/utf8.h"
#include "host_hooks/native_hooks.h"
#include "host_hooks/process_usage.h"

namespace o4s::host_hooks {

namespace {

using Clock = std::chrono::steady_clock;

// As long as a front door gives its own kernels to start (a sandboxed
// worker's first imports on a loaded machine).
constexpr double kStartTimeoutS = 60.0;
constexpr std::size_t kCodeShownChars = 120;

// The job's code as list shows it: the first line, cut on a code point.
std::string shown_code(const std::string& code) {
  std::string line = code.substr(0, code.find('\n'));
  std::string_view cut = utf8::prefix(line, kCodeShownChars);
  return cut.size() < code.size() ? std::string(cut) + "..." : std::string(cut);
}

}  // namespace

// The job's cell stdout, as it arrives, into the window.
class BackgroundJob::Sink final : public kernel::ChunkSink {
 public:
  explicit Sink(BackgroundJob& job) : job_(job) {}
  Status deliver(const std::string& text) override {
    std::lock_guard lock(job_.mutex_);
    job_.output_.append(text);
    return {};
  }
  // The window keeps head + tail: it takes the whole stream.
  bool bounds_itself() const override { return true; }

 private:
  BackgroundJob& job_;
};

BackgroundJob::BackgroundJob(std::string id, std::string code)
    : id_(std::move(id)),
      code_(shown_code(code)),
      started_at_(utc_timestamp()),
      started_(Clock::now()) {}

BackgroundJob::~BackgroundJob() { stop(); }

void BackgroundJob::launch(JobLaunch launch) {
  thread_ = std::thread([this, launch = std::move(launch)]() mutable { run(std::move(launch)); });
}

void BackgroundJob::run(JobLaunch launch) {
  // Whichever way the job ends, its worker is gone by then: one slot less.
  ScopeExit counted_out([workers = launch.workers, released = launch.released] {
    if (workers) workers->fetch_sub(1);
    if (released) released();
  });
  auto hooks = std::make_shared<NativeKernelHooks>(launch.caller.dispatcher.lock(),
                                                   std::move(launch.settings),
                                                   std::move(launch.caller.frame_id));
  auto manager = std::make_shared<kernel::KernelManager>(std::move(launch.options), hooks, nullptr);
  {
    std::lock_guard lock(mutex_);
    if (stop_requested_) return finish("stopped", "stopped before its worker started");
    manager_ = manager;
  }
  Status started = manager->start(kStartTimeoutS, std::move(launch.environment));
  bool go = false;
  {
    std::lock_guard lock(mutex_);
    if (stop_requested_) {
      finish("stopped", "stopped while its worker started");
    } else if (!started) {
      finish("failed", "its worker did not start: " + started.error().message);
    } else if (interrupt_requested_) {
      finish("interrupted", "interrupted before its code ran");
    } else {
      state_ = "running";
      go = true;
    }
  }
  if (go) {
    Sink sink(*this);
    Result<host::Json> outcome =
        manager->execute(launch.code, launch.origin, id_, &sink, nullptr, nullptr, id_);
    std::lock_guard lock(mutex_);
    conclude(outcome);
  }
  // The worker is gone before the job reads as ended to stop(): no process
  // outlives its job.
  manager->shutdown();
  std::lock_guard lock(mutex_);
  manager_.reset();
}

void BackgroundJob::conclude(const Result<host::Json>& outcome) {
  if (stop_requested_) return finish("stopped", "stopped with its kernel");
  if (!outcome) return finish("crashed", outcome.error().message);
  const host::Json& response = outcome.value();
  if (const auto usage = response.find("usage"); usage != response.end() && usage->is_object()) {
    cpu_s_ = usage->value("cpu_s", cpu_s_);
    if (auto kb = usage->find("peak_rss_kb"); kb != usage->end() && kb->is_number()) {
      peak_rss_bytes_ = static_cast<std::uint64_t>(kb->get<double>() * 1024);
    }
  }
  const host::Json error = response.value("error", host::Json());
  std::optional<std::string> message;
  if (error.is_string() && !error.get<std::string>().empty()) message = error.get<std::string>();
  if (response.value("interrupted", false) || (interrupt_requested_ && message)) {
    return finish("interrupted", message);
  }
  finish(message ? "error" : "done", message);
}

void BackgroundJob::finish(std::string state, std::optional<std::string> error) {
  state_ = std::move(state);
  error_ = std::move(error);
  ended_ = Clock::now();
  ended_at_ = utc_timestamp();
}

std::optional<pid_t> BackgroundJob::worker_pid() {
  if (!manager_) return std::nullopt;
  // A sandboxed worker is not the spawned process (bubblewrap is): the
  // sandbox pins the worker itself.
  if (const auto& box = manager_->options().sandbox) {
    if (auto pidfd = box->worker_pidfd()) return pidfd_pid(*pidfd);
  }
  auto transport = manager_->transport();
  return transport ? transport->local_pid() : std::nullopt;
}

void BackgroundJob::sample_usage() {
  if (ended_) return;  // the cell's own report stands
  auto pid = worker_pid();
  if (!pid) return;
  if (auto usage = process_usage(*pid)) {
    cpu_s_ = usage->cpu_s;
    peak_rss_bytes_ = std::max(peak_rss_bytes_, usage->peak_rss_bytes);
  }
}

host::Json BackgroundJob::describe(bool with_output) {
  std::lock_guard lock(mutex_);
  sample_usage();
  auto until = ended_.value_or(Clock::now());
  host::Json job{{"exec_id", id_},
                 {"state", state_},
                 {"started_at", started_at_},
                 {"ended_at", ended_at_ ? host::Json(*ended_at_) : host::Json()},
                 {"wall_s", std::chrono::duration<double>(until - started_).count()},
                 {"cpu_s", cpu_s_},
                 {"peak_rss_bytes", peak_rss_bytes_},
                 {"output_bytes", output_.total_bytes()},
                 {"dropped_bytes", output_.dropped_bytes()},
                 {"error", error_ ? host::Json(*error_) : host::Json()},
                 {"code", code_}};
  if (with_output) job["output"] = output_.render();
  return job;
}

host::Json BackgroundJob::interrupt() {
  std::shared_ptr<kernel::KernelManager> manager;
  {
    std::lock_guard lock(mutex_);
    host::Json reply{{"exec_id", id_}, {"state", state_}};
    if (ended_) {
      reply["delivered"] = false;
      reply["reason"] = "the job already ended (" + state_ + ")";
      return reply;
    }
    interrupt_requested_ = true;
    if (state_ == "starting") {
      reply["delivered"] = false;
      reply["reason"] = "its worker is still starting: the job ends before its code runs";
      return reply;
    }
    manager = manager_;
  }
  // Outside the job's lock: the delivery may wait on the sandbox, and the
  // job's thread takes the lock to record the output that is still coming.
  // Kept for the cell if it is not under way yet: the job reads as
  // running a moment before its cell is sent.
  auto delivery = manager->interrupt(/*for_next_cell=*/true);
  host::Json reply{{"exec_id", id_}, {"state", "running"}};
  reply["delivered"] = delivery && delivery.value().delivered;
  if (!delivery) {
    reply["reason"] = delivery.error().message;
  } else if (delivery.value().reason) {
    reply["reason"] = *delivery.value().reason;
  }
  return reply;
}

void BackgroundJob::stop() {
  std::shared_ptr<kernel::KernelManager> manager;
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = !ended_ || stop_requested_;
    manager = manager_;
  }
  // Killing the worker ends a running cell at once (end of stream); a
  // worker still starting fails its handshake. The thread then reaps it.
  if (manager) manager->kill_worker();
  std::lock_guard join(join_mutex_);
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool BackgroundJob::finished() {
  std::lock_guard lock(mutex_);
  return ended_.has_value();
}

}  // namespace o4s::host_hooks
