#include "mcp/slurm_kernels.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>

#include "base/random_id.h"
#include "base/utc_time.h"
#include "base/write_all.h"
#include "proc/signals.h"
#include "proc/spawn.h"
#include "proto/limits.h"
#include "proto/line_reader.h"

extern char** environ;

namespace o4s::mcp {

namespace {

// Executions kept for get_execution, as the local pool keeps them.
constexpr std::size_t kExecutionsKept = 256;
// How long a shut-down bridge may take to end its job (shutdown_request,
// then scancel) before it is killed.
constexpr auto kShutdownWait = std::chrono::seconds(60);
// How long the job's kernel may take to list its variables.
constexpr auto kVariablesWait = std::chrono::seconds(90);
// How often idle kernels are looked for.
constexpr auto kHousekeepingTick = std::chrono::seconds(1);

// The server's environment for the bridge (and so the job: sbatch
// --export=ALL), with the package importable and the records going to the
// server's data directory.
std::vector<std::string> bridge_env(const SlurmSettings& settings) {
  std::vector<std::string> env;
  std::string python_path = settings.repo_root;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (text.starts_with("PYTHONPATH=")) {
      python_path += ":" + std::string(text.substr(11));
    } else if (!text.starts_with("OPENAI4S_DATA_DIR=")) {
      env.emplace_back(text);
    }
  }
  env.push_back("PYTHONPATH=" + python_path);
  env.push_back("OPENAI4S_DATA_DIR=" + settings.data_dir);
  return env;
}

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// A job whose bridge died without shutting it down: scancel it (as the
// provisioner's own cleanup would have) rather than leave it to its time
// limit. A job that already ended makes scancel only complain.
void cancel_job(const std::string& job_id) {
  std::fprintf(stderr, "openai4s-mcp: the bridge of Slurm job %s ended: scancel %s\n",
               job_id.c_str(), job_id.c_str());
  proc::SpawnRequest request;
  request.argv = {"scancel", job_id};
  for (char** entry = environ; *entry != nullptr; ++entry) request.env.emplace_back(*entry);
  auto spawned = proc::spawn_with_pipes(request);
  if (!spawned) {
    std::fprintf(stderr, "openai4s-mcp: scancel %s: %s\n", job_id.c_str(),
                 spawned.error().message.c_str());
    return;
  }
  int status = 0;
  while (::waitpid(spawned->pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

SlurmKernel::SlurmKernel(std::string id_, std::string language_, std::string workspace_)
    : id(std::move(id_)),
      language(std::move(language_)),
      workspace(std::move(workspace_)),
      created(utc_timestamp()),
      last_used_(created) {}

SlurmKernel::~SlurmKernel() { close(); }

Status SlurmKernel::launch(const SlurmSettings& settings) {
  proc::SpawnRequest request;
  request.argv = {settings.python, "-m", "openai4s.slurm.mcp_bridge"};
  request.env = bridge_env(settings);
  request.cwd = workspace;
  auto pipes = proc::spawn_with_pipes(request);
  if (!pipes) return std::move(pipes).error();
  auto pidfd = proc::open_pidfd(pipes->pid);
  if (!pidfd) {
    ::kill(-pipes->pid, SIGKILL);
    return std::move(pidfd).error();
  }
  process_ = std::make_unique<proc::ChildProcess>(pipes->pid, std::move(pidfd.value()));
  to_bridge_ = std::move(pipes->stdin_write);
  from_bridge_ = std::move(pipes->stdout_read);
  // The bridge's log (jupyter_client's, the provisioner's) joins the
  // server's stderr, where the server's own log goes.
  if (pipes->stderr_read.get() >= 0) {
    std::thread([fd = std::move(pipes->stderr_read)] {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(fd.get(), buffer, sizeof buffer)) > 0) {
        (void)!::write(STDERR_FILENO, buffer, static_cast<std::size_t>(n));
      }
    }).detach();
  }
  reader_ = std::thread([this] { read_answers(); });
  const std::string& spec = language == "r" ? settings.r_kernelspec : settings.python_kernelspec;
  auto started = call(Json{{"op", "start"}, {"kernel_name", spec}, {"cwd", workspace}},
                      seconds(settings.start_timeout_s));
  if (!started) return std::move(started).error();
  std::lock_guard lock(mutex_);
  job_id_ = started.value().value("job_id", "");
  state_ = "idle";
  last_used_at_ = std::chrono::steady_clock::now();  // idle from here
  return {};
}

bool SlurmKernel::send(const Json& request) {
  std::lock_guard lock(send_mutex_);
  return to_bridge_.get() >= 0 && write_all(to_bridge_.get(), request.dump() + "\n");
}

void SlurmKernel::read_answers() {
  // The bridge's answers are JSON lines, bounded as a worker's frames are
  // (an oversized one is skipped, and reading goes on).
  proto::LineReader reader(from_bridge_.get(), proto::kMaxFrameBytes);
  for (;;) {
    auto line = reader.read_line();
    if (!line && line.error().code == ErrorCode::kProtocol) continue;
    if (!line || !line.value()) break;  // a broken pipe, or the bridge ended
    Json message = Json::parse(*line.value(), nullptr, false);
    if (message.is_object()) take(std::move(message));
  }
  std::string orphan;
  {
    std::lock_guard lock(mutex_);
    bridge_gone_ = true;
    state_ = "dead";
    if (running_) {
      running_->finish(make_error(ErrorCode::kWorkerExited, "the Slurm kernel's bridge ended"));
      running_.reset();
    }
    if (!closing_ && !shut_down_) orphan = job_id_;
    changed_.notify_all();
  }
  if (!orphan.empty()) cancel_job(orphan);
}

void SlurmKernel::take(Json message) {
  const std::string op = message.value("op", "");
  if (op == "ask") return start_asking(message.value("prompt", ""));
  std::lock_guard lock(mutex_);
  if (op == "job") {
    if (message["job_id"].is_string()) job_id_ = message["job_id"];
  } else if (op == "shut_down") {
    shut_down_ = true;
    answers_.push_back(std::move(message));
  } else if (op == "stdout" && running_) {
    (void)running_->deliver(message.value("text", ""));
  } else if ((op == "display") && running_) {
    (void)running_->deliver(message["bundle"]);
  } else if (op == "done" && running_) {
    running_->finish(message["response"]);
    running_.reset();
    asker_ = nullptr;
    state_ = "idle";
    last_used_at_ = std::chrono::steady_clock::now();
  } else if (op != "stdout" && op != "stderr" && op != "display" && op != "done") {
    answers_.push_back(std::move(message));
  }
  changed_.notify_all();
}

void SlurmKernel::start_asking(const std::string& prompt) {
  std::shared_ptr<Execution> execution;
  Asker ask;
  {
    std::lock_guard lock(mutex_);
    execution = running_;
    ask = asker_;
  }
  std::lock_guard guard(asking_mutex_);
  // The kernel asks one question at a time: the last one was answered.
  if (asking_.joinable()) asking_.join();
  if (!execution || !ask) {
    (void)send(Json{{"op", "answer"}, {"value", "n"}});
    return;
  }
  // On a thread of its own: the answers keep being read meanwhile (an
  // interrupt, the bridge's end), and the person may take minutes.
  asking_ = std::thread([this, ask, execution, prompt] {
    Json reply = ask(prompt, execution);
    reply["op"] = "answer";
    (void)send(reply);
  });
}

Result<Json> SlurmKernel::call(const Json& request, std::chrono::milliseconds timeout) {
  std::lock_guard serial(call_mutex_);
  if (!send(request)) return make_error(ErrorCode::kNotAlive, "the Slurm kernel's bridge is gone");
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [this] { return !answers_.empty() || bridge_gone_; })) {
    return make_error(ErrorCode::kTimeout,
                      "the Slurm kernel did not answer " + request.value("op", "") + " in time");
  }
  if (answers_.empty()) {
    return make_error(ErrorCode::kNotAlive, "the Slurm kernel's bridge ended");
  }
  Json answer = std::move(answers_.front());
  answers_.pop_front();
  if (answer.value("op", "") == "failed") {
    state_ = bridge_gone_ ? "dead" : state_;
    return make_error(ErrorCode::kNotAlive, answer.value("error", "failed"));
  }
  if (answer.contains("job_id") && answer["job_id"].is_string()) job_id_ = answer["job_id"];
  return answer;
}

Result<std::shared_ptr<Execution>> SlurmKernel::execute(const std::string& code,
                                                        std::optional<double> timeout_s,
                                                        Asker ask) {
  std::shared_ptr<Execution> execution;
  {
    std::lock_guard lock(mutex_);
    if (bridge_gone_) return make_error(ErrorCode::kNotAlive, "kernel " + id + " is dead");
    if (running_) {
      return make_error(ErrorCode::kBusy, "kernel " + id + " is running execution " +
                                              running_->id() +
                                              "; wait for it (get_execution) or interrupt it");
    }
    execution = std::make_shared<Execution>(uuid4(), id, ++cells_run_);
    running_ = execution;
    asker_ = std::move(ask);
    state_ = "busy";
    last_used_ = utc_timestamp();
    last_used_at_ = std::chrono::steady_clock::now();
  }
  if (!send(Json{{"op", "execute"}, {"code", code}})) {
    std::lock_guard lock(mutex_);
    running_.reset();
    return make_error(ErrorCode::kNotAlive, "the Slurm kernel's bridge is gone");
  }
  if (timeout_s) {
    std::lock_guard guard(deadline_mutex_);
    if (deadline_.joinable()) deadline_.join();
    deadline_ = std::thread([this, execution, t = *timeout_s] { watch_deadline(execution, t); });
  }
  return execution;
}

Result<Json> SlurmKernel::variables(long long limit) {
  {
    std::lock_guard lock(mutex_);
    if (bridge_gone_) return make_error(ErrorCode::kNotAlive, "kernel " + id + " is dead");
    if (running_) return make_error(ErrorCode::kBusy, "a cell runs");
    last_used_at_ = std::chrono::steady_clock::now();
  }
  return call(Json{{"op", "variables"}, {"limit", limit}}, kVariablesWait);
}

bool SlurmKernel::idle_since(std::chrono::steady_clock::time_point cutoff) {
  std::lock_guard lock(mutex_);
  return !running_ && last_used_at_ <= cutoff;
}

void SlurmKernel::watch_deadline(std::shared_ptr<Execution> execution, double timeout_s) {
  if (execution->wait_for(seconds(timeout_s))) return;
  (void)interrupt(StopReason::kTimeout);
}

Status SlurmKernel::interrupt(StopReason reason) {
  std::lock_guard lock(mutex_);
  if (!running_) return {};
  running_->mark_stop(reason);
  if (!send(Json{{"op", "interrupt"}})) {
    return make_error(ErrorCode::kNotAlive, "the Slurm kernel's bridge is gone");
  }
  return {};
}

void SlurmKernel::close() {
  if (!process_) return;
  // The bridge shuts the job down at end of input; a bridge that cannot is
  // killed, and its job cancelled.
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  {
    std::lock_guard lock(send_mutex_);
    to_bridge_.reset();
  }
  bool ended = process_->wait_exit(kShutdownWait);
  if (!ended) process_->kill_group();
  if (reader_.joinable()) reader_.join();
  std::string job;
  {
    std::lock_guard lock(mutex_);
    if (!ended && !shut_down_) job = job_id_;
  }
  if (!job.empty()) cancel_job(job);
  {
    std::lock_guard guard(asking_mutex_);
    if (asking_.joinable()) asking_.join();
  }
  std::lock_guard guard(deadline_mutex_);
  if (deadline_.joinable()) deadline_.join();
  process_.reset();
}

Json SlurmKernel::describe() {
  std::lock_guard lock(mutex_);
  return Json{{"kernel_id", id},        {"language", language},    {"state", state_},
              {"created", created},     {"last_used", last_used_}, {"cells_run", cells_run_},
              {"workspace", workspace}, {"engine", "slurm"},       {"job_id", job_id_}};
}

SlurmKernels::SlurmKernels(SlurmSettings settings, KernelPool& pool)
    : settings_(std::move(settings)), pool_(pool) {
  if (settings_.idle_timeout.count() > 0) housekeeper_ = std::thread([this] { housekeep(); });
}

// The default: a fresh directory under --workspace-root (which the compute
// nodes see, unlike, perhaps, the data dir); a requested one is checked as
// a local kernel's is.
Result<std::string> SlurmKernels::choose_workspace(const std::string& id,
                                                   const std::optional<std::string>& requested) {
  if (requested) return pool_.choose_workspace(id, requested);
  std::string path = settings_.workspace_root + "/slurm-" + id;
  if (::mkdir(path.c_str(), 0700) != 0) return system_error("mkdir: " + path, errno);
  return path;
}

Result<std::shared_ptr<SlurmKernel>> SlurmKernels::create(
    const std::string& language, const std::optional<std::string>& workspace) {
  if (language != "python" && language != "r") {
    return make_error(ErrorCode::kInvalidArgument, "language must be python or r");
  }
  std::string id = uuid4();
  auto chosen = choose_workspace(id, workspace);
  if (!chosen) return std::move(chosen).error();
  auto pinned = directory_id(chosen.value());
  if (!pinned) return std::move(pinned).error();
  // The slot (and the workspace's claim) is held from before the job is
  // submitted: a queued start takes minutes.
  if (Status held = pool_.hold_outside(id, chosen.value()); !held) {
    if (!workspace) ::rmdir(chosen.value().c_str());
    return std::move(held).error();
  }
  auto kernel = std::make_shared<SlurmKernel>(id, language, chosen.value());
  kernel->workspace_id = pinned.value();
  if (Status launched = kernel->launch(settings_); !launched) {
    kernel->close();
    pool_.release_outside(id);
    return make_error(launched.error().code,
                      "the Slurm job did not start a kernel: " + launched.error().message);
  }
  std::lock_guard lock(mutex_);
  kernels_[id] = kernel;
  return kernel;
}

std::shared_ptr<SlurmKernel> SlurmKernels::find(const std::string& kernel_id) {
  std::lock_guard lock(mutex_);
  auto found = kernels_.find(kernel_id);
  return found == kernels_.end() ? nullptr : found->second;
}

void SlurmKernels::remember(const std::shared_ptr<Execution>& execution) {
  std::lock_guard lock(mutex_);
  executions_[execution->id()] = execution;
  execution_order_.push_back(execution->id());
  while (execution_order_.size() > kExecutionsKept) {
    executions_.erase(execution_order_.front());
    execution_order_.pop_front();
  }
}

std::shared_ptr<Execution> SlurmKernels::find_execution(const std::string& execution_id) {
  std::lock_guard lock(mutex_);
  auto found = executions_.find(execution_id);
  return found == executions_.end() ? nullptr : found->second;
}

Status SlurmKernels::shutdown(const std::string& kernel_id) {
  std::shared_ptr<SlurmKernel> kernel;
  {
    std::lock_guard lock(mutex_);
    auto found = kernels_.find(kernel_id);
    if (found == kernels_.end()) return make_error(ErrorCode::kInvalidArgument, "unknown kernel");
    kernel = found->second;
    kernels_.erase(found);
  }
  (void)kernel->interrupt(StopReason::kInterrupted);
  auto done = kernel->call(Json{{"op", "shutdown"}}, kShutdownWait);
  // Whatever the bridge answered (or, dead, could not), close() ends it
  // and, were it killed, cancels the job: the kernel is gone either way.
  if (!done) {
    std::fprintf(stderr, "openai4s-mcp: Slurm kernel %s: shutdown: %s\n", kernel_id.c_str(),
                 done.error().message.c_str());
  }
  kernel->close();
  pool_.release_outside(kernel_id);
  return {};
}

Status SlurmKernels::restart(const std::string& kernel_id) {
  auto kernel = find(kernel_id);
  if (!kernel) return make_error(ErrorCode::kInvalidArgument, "unknown kernel");
  (void)kernel->interrupt(StopReason::kInterrupted);
  auto done = kernel->call(Json{{"op", "restart"}}, seconds(settings_.start_timeout_s));
  if (!done) return std::move(done).error();
  return {};
}

Json SlurmKernels::list() {
  std::vector<std::shared_ptr<SlurmKernel>> kernels;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, kernel] : kernels_) kernels.push_back(kernel);
  }
  Json out = Json::array();
  for (auto& kernel : kernels) out.push_back(kernel->describe());
  return out;
}

void SlurmKernels::shutdown_all() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, kernel] : kernels_) ids.push_back(id);
  }
  wake_.notify_all();
  if (housekeeper_.joinable()) housekeeper_.join();
  for (auto& id : ids) (void)shutdown(id);
}

void SlurmKernels::housekeep() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kHousekeepingTick);
    if (stopping_) break;
    auto cutoff = std::chrono::steady_clock::now() - settings_.idle_timeout;
    std::vector<std::shared_ptr<SlurmKernel>> kernels;
    for (auto& [id, kernel] : kernels_) kernels.push_back(kernel);
    lock.unlock();
    for (auto& kernel : kernels) {
      if (!kernel->idle_since(cutoff)) continue;
      std::fprintf(stderr, "openai4s-mcp: Slurm kernel %s was idle for %llds: shut down\n",
                   kernel->id.c_str(), static_cast<long long>(settings_.idle_timeout.count()));
      (void)shutdown(kernel->id);
    }
    lock.lock();
  }
}

}  // namespace o4s::mcp
