#include "mcp/kernel_pool.h"

#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <utility>

#include "base/paths.h"
#include "base/random_id.h"
#include "base/utc_time.h"
#include "host/host_methods.h"
#include "host_hooks/front_door.h"
#include "kernel/warm_memory.h"
#include "sandbox/kernel_sandbox.h"

namespace o4s::mcp {

namespace fs = std::filesystem;

namespace {

// How often deadlines and idle kernels are looked at.
constexpr auto kHousekeepingTick = std::chrono::milliseconds(250);
// A cell that ignores this many interrupts, a second apart, has its
// worker killed (the kernel is then dead: restart_kernel).
constexpr int kInterruptsBeforeKill = 20;
// Executions kept for get_execution after they finished.
constexpr std::size_t kExecutionsKept = 256;

}  // namespace

Kernel::~Kernel() {
  // The pool joins a cell's thread when it closes the kernel; a thread that
  // still holds the last reference is that cell's own, ending now.
  if (runner.joinable()) {
    if (runner.get_id() == std::this_thread::get_id()) {
      runner.detach();
    } else {
      runner.join();
    }
  }
}

Result<std::unique_ptr<KernelPool>> KernelPool::open(PoolSettings settings) {
  auto sandbox_settings = sandbox::settings_from_environment(kernel::current_process_environment(),
                                                             sandbox::physical_memory_bytes());
  if (!sandbox_settings) return std::move(sandbox_settings).error();
  std::error_code ec;
  fs::create_directories(fs::path(settings.data_dir) / "artifacts", ec);
  fs::create_directories(fs::path(settings.data_dir) / "agent-workspaces", ec);
  auto store = store::Store::open(settings.data_dir + "/openai4s.db");
  if (!store) return std::move(store).error();
  if (auto seeded = store.value()->seed_default_permission_rules(host::default_rules()); !seeded) {
    return std::move(seeded).error();
  }
  return std::unique_ptr<KernelPool>(
      new KernelPool(std::move(settings), std::move(sandbox_settings.value()), store.value()));
}

KernelPool::KernelPool(PoolSettings settings, sandbox::SandboxSettings sandbox,
                       std::shared_ptr<store::Store> store)
    : settings_(std::move(settings)),
      sandbox_settings_(std::move(sandbox)),
      store_(std::move(store)) {
  housekeeper_ = std::thread([this] { housekeep(); });
  open_warm_pools();
  std::lock_guard lock(job_ends_->mutex);
  job_ends_->pool = this;
}

KernelPool::~KernelPool() { shutdown_all(); }

Result<std::string> KernelPool::choose_workspace(const std::string& kernel_id,
                                                 const std::optional<std::string>& requested) {
  if (!requested) {
    std::string path = settings_.data_dir + "/agent-workspaces/mcp-" + kernel_id;
    if (::mkdir(path.c_str(), 0700) != 0) return system_error("mkdir: " + path, errno);
    return path;
  }
  auto root = real_path(settings_.workspace_root);
  if (!root) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the server's --workspace-root does not exist: " + settings_.workspace_root);
  }
  std::string wanted = *requested;
  if (!wanted.empty() && wanted[0] != '/') wanted = root.value() + "/" + wanted;
  auto real = real_path(wanted);
  if (!real || !fs::is_directory(real.value())) {
    return make_error(ErrorCode::kInvalidArgument,
                      "workspace is not an existing directory: " + *requested);
  }
  if (!path_contains(root.value(), real.value())) {
    return make_error(ErrorCode::kInvalidArgument,
                      "workspace " + real.value() + " is not under the server's --workspace-root " +
                          root.value());
  }
  auto data = real_path(settings_.data_dir);
  if (data && path_contains(real.value(), data.value())) {
    return make_error(ErrorCode::kInvalidArgument,
                      "workspace " + real.value() +
                          " contains the server's data directory (its store and audit log)");
  }
  if (Status apart = apart_from_others(real.value(), root.value()); !apart) {
    return std::move(apart).error();
  }
  return real.value();
}

// A cell can rename and replace whatever lies inside its workspace: a
// workspace that is the root, holds the default workspaces, or nests with
// another kernel's would let one kernel's cell move another's files (or
// point them at the host). Sharing the very same directory is allowed.
Status KernelPool::apart_from_others(const std::string& wanted, const std::string& root) {
  auto refuse = [&](const std::string& why) {
    return make_error(ErrorCode::kInvalidArgument, "workspace " + wanted + " " + why);
  };
  if (wanted == root) return refuse("is the --workspace-root itself: ask for a directory under it");
  auto defaults = real_path(settings_.data_dir + "/agent-workspaces");
  if (defaults && path_contains(wanted, defaults.value())) {
    return refuse("contains the kernels' default workspaces");
  }
  std::lock_guard lock(mutex_);
  auto nests = [&](const std::string& other) {
    return other != wanted && (path_contains(wanted, other) || path_contains(other, wanted));
  };
  for (const auto& [id, other] : kernels_) {
    if (nests(other->workspace)) {
      return refuse("nests with kernel " + id + "'s workspace " + other->workspace);
    }
  }
  for (const auto& [id, other] : outside_) {
    if (nests(other)) return refuse("nests with kernel " + id + "'s workspace " + other);
  }
  return {};
}

Result<std::shared_ptr<Kernel>> KernelPool::create(const std::string& language,
                                                   const std::optional<std::string>& workspace) {
  if (Status allowed = reserve_slot(language); !allowed) return std::move(allowed).error();
  // The slot is held until the kernel is registered or has failed.
  std::shared_ptr<void> slot(nullptr, [this](void*) {
    {
      std::lock_guard lock(mutex_);
      --starting_;
    }
    // The pools count the slot as taken while it is held: look again.
    poke_warm_pools();
  });
  // A pooled worker comes with its own fresh workspace: only a kernel that
  // asked for none can take one.
  std::optional<kernel::WarmWorker> warm;
  // A pool whose last start failed (a broken sandbox, a worker killed while
  // it started) does not fail this kernel: it starts the normal way, and
  // that start says why if the cause is still there.
  if (!workspace) {
    auto claimed = claim_warm(language);
    if (claimed) warm = std::move(claimed.value());
  }
  std::optional<std::string> warm_workspace;
  if (warm) warm_workspace = warm->workspace;
  // A normal start: the language's pool refills only after it.
  auto fallback = warm ? nullptr : fallback_start(language);
  auto kernel = describe_kernel(language, workspace, warm_workspace);
  if (!kernel) {
    if (warm) warm->discard();
    return kernel;
  }
  Status started = start_manager(*kernel.value(), std::move(warm));
  std::lock_guard lock(mutex_);
  if (!started) {
    kernel.value()->manager->shutdown();
    return std::move(started).error();
  }
  if (stopping_) {
    kernel.value()->manager->shutdown();
    return make_error(ErrorCode::kNotAlive, "the server is shutting down");
  }
  kernels_[kernel.value()->id] = kernel.value();
  return kernel;
}

namespace {

// Background jobs' workers, every kernel's: each is a worker process, so it
// counts against --max-kernels like a kernel (issue 30). mutex_ held.
std::size_t job_workers(const std::map<std::string, std::shared_ptr<Kernel>>& kernels) {
  std::size_t total = 0;
  for (const auto& [id, kernel] : kernels)
    total += kernel->hooks ? kernel->hooks->running_jobs() : 0;
  return total;
}

}  // namespace

Status KernelPool::reserve_slot(const std::string& language) {
  if (language != "python" && language != "r") {
    return make_error(ErrorCode::kInvalidArgument,
                      "language must be \"python\" or \"r\", not \"" + language + "\"");
  }
  if (language == "r" && settings_.r_worker_argv.empty()) {
    return make_error(ErrorCode::kUnsupported,
                      "this server has no R: install R (Rscript on PATH) and start it again");
  }
  std::lock_guard lock(mutex_);
  if (Status free = slot_free(); !free) return free;
  ++starting_;
  trim_standbys();
  return {};
}

std::size_t KernelPool::workers_in_use() const {
  return kernels_.size() + starting_ + outside_.size() + job_workers(kernels_);
}

std::size_t KernelPool::standbys_held() const {
  std::size_t standbys = 0;
  for (const auto& [id, kernel] : kernels_) {
    if (kernel->manager && kernel->manager->holds_standby()) ++standbys;
  }
  return standbys;
}

// A kernel's standby is the spare that gives way: a kernel or a job that
// takes the last room discards ready standbys instead of being refused (one
// still starting checks the room again when it is up). mutex_ held.
void KernelPool::trim_standbys() {
  while (workers_in_use() + standbys_held() > settings_.max_kernels) {
    bool given = false;
    for (const auto& [id, kernel] : kernels_) {
      if (kernel->manager && kernel->manager->give_up_standby()) {
        given = true;
        break;
      }
    }
    if (!given) return;
  }
}

Status KernelPool::slot_free() const {
  if (stopping_) return make_error(ErrorCode::kNotAlive, "the server is shutting down");
  const std::size_t jobs = job_workers(kernels_);
  if (workers_in_use() >= settings_.max_kernels) {
    const std::string counted =
        jobs == 0 ? "" : ", counting " + std::to_string(jobs) + " background jobs' workers";
    return make_error(ErrorCode::kBusy, "the server already runs " +
                                            std::to_string(settings_.max_kernels) +
                                            " kernels (--max-kernels" + counted +
                                            "): shut one down with shutdown_kernel");
  }
  return {};
}

Status KernelPool::hold_outside(const std::string& kernel_id, const std::string& workspace) {
  std::lock_guard lock(mutex_);
  if (Status free = slot_free(); !free) return free;
  outside_[kernel_id] = workspace;
  trim_standbys();
  return {};
}

void KernelPool::release_outside(const std::string& kernel_id) {
  {
    std::lock_guard lock(mutex_);
    outside_.erase(kernel_id);
  }
  poke_warm_pools();
}

// The kernel's identity, workspace (pinned) and root frame; no process yet.
Result<std::shared_ptr<Kernel>> KernelPool::describe_kernel(
    const std::string& language, const std::optional<std::string>& workspace,
    const std::optional<std::string>& warm_workspace) {
  auto kernel = std::make_shared<Kernel>();
  kernel->id = uuid4();
  kernel->language = language;
  kernel->created = utc_timestamp();
  kernel->last_used_text = kernel->created;
  if (warm_workspace) {
    kernel->workspace = *warm_workspace;
  } else {
    auto chosen = choose_workspace(kernel->id, workspace);
    if (!chosen) return std::move(chosen).error();
    kernel->workspace = chosen.value();
  }
  // The directory the file tools may use from now on, whatever its path
  // comes to point at later.
  auto pinned = directory_id(kernel->workspace);
  if (!pinned) return std::move(pinned).error();
  kernel->workspace_id = pinned.value();
  store::NewFrame frame;
  frame.kind = "turn";
  frame.name = "mcp kernel " + kernel->id;
  auto frame_id = store_->new_frame(frame);
  if (!frame_id) return std::move(frame_id).error();
  kernel->frame_id = frame_id.value();
  return kernel;
}

kernel::KernelOptions KernelPool::kernel_options(const std::string& language,
                                                 const std::string& workspace) const {
  host_hooks::FrontDoorKernel spec{language,           workspace,
                                   settings_.python,   settings_.repo_root,
                                   settings_.data_dir, settings_.r_worker_argv};
  kernel::KernelOptions options = host_hooks::front_door_kernel_options(spec, sandbox_settings_);
  options.standby = settings_.standby;
  return options;
}

// The kernel's own host dispatcher and manager, and its worker started
// (or a pooled one adopted, with the sandbox it was started in).
Status KernelPool::start_manager(Kernel& kernel, std::optional<kernel::WarmWorker> warm) {
  auto dispatcher = host_hooks::front_door_dispatcher(store_, kernel.workspace, settings_.data_dir);
  kernel::KernelOptions options = kernel_options(kernel.language, kernel.workspace);
  if (warm) options.sandbox = warm->sandbox;
  // A standby is a worker too: it starts only while the limit has room for
  // it (counted as held from here; +1 while its kernel is still starting).
  options.standby_room = [this, id = kernel.id] {
    std::lock_guard lock(mutex_);
    std::size_t total = workers_in_use() + standbys_held() + warm_total();
    if (kernels_.count(id) == 0) ++total;
    return !stopping_ && total <= settings_.max_kernels;
  };
  // A job's worker is admitted as a kernel is (it is already counted).
  auto admit_job = [this]() -> std::optional<std::string> {
    std::lock_guard lock(mutex_);
    if (workers_in_use() <= settings_.max_kernels) {
      trim_standbys();
      return std::nullopt;
    }
    return "the server already runs " + std::to_string(settings_.max_kernels) +
           " kernels and background jobs (--max-kernels; each job is a worker of its own): "
           "wait for a job to end, or shut a kernel down";
  };
  // A job's end, whichever way (done, failed, interrupted, stopped,
  // crashed), frees a worker's room: the pools may refill at once.
  auto job_released = [ends = job_ends_] {
    std::lock_guard lock(ends->mutex);
    if (ends->pool) ends->pool->poke_warm_pools();
  };
  kernel.hooks = host_hooks::front_door_hooks(dispatcher, settings_.host, kernel.frame_id, options,
                                              admit_job, job_released);
  kernel.manager =
      std::make_unique<kernel::KernelManager>(std::move(options), kernel.hooks, nullptr);
  if (warm) return kernel.manager->adopt(std::move(*warm));
  return kernel.manager->start(settings_.init_timeout_s);
}

std::shared_ptr<Kernel> KernelPool::find(const std::string& kernel_id) {
  std::shared_ptr<Kernel> kernel;
  {
    std::lock_guard lock(mutex_);
    auto it = kernels_.find(kernel_id);
    if (it == kernels_.end()) return nullptr;
    kernel = it->second;
  }
  // Any use (a file read, a variable listing) keeps it from idling out.
  std::lock_guard lock(kernel->mutex);
  kernel->last_used = std::chrono::steady_clock::now();
  kernel->last_used_text = utc_timestamp();
  return kernel;
}

void KernelPool::close_kernel(const std::shared_ptr<Kernel>& kernel) {
  {
    std::lock_guard lock(kernel->mutex);
    kernel->closed = true;
  }
  // Closing the transport ends a running cell (end of stream), which lets
  // its thread finish; the join is outside the kernel's lock, which that
  // thread takes last.
  kernel->manager->shutdown();
  if (kernel->runner.joinable()) kernel->runner.join();
}

Status KernelPool::shutdown(const std::string& kernel_id) {
  std::shared_ptr<Kernel> kernel;
  {
    std::lock_guard lock(mutex_);
    auto it = kernels_.find(kernel_id);
    if (it == kernels_.end()) {
      return make_error(ErrorCode::kInvalidArgument, "no kernel with kernel_id " + kernel_id);
    }
    kernel = it->second;
    kernels_.erase(it);
  }
  close_kernel(kernel);
  poke_warm_pools();
  return {};
}

Status KernelPool::restart(const std::string& kernel_id) {
  auto kernel = find(kernel_id);
  if (!kernel)
    return make_error(ErrorCode::kInvalidArgument, "no kernel with kernel_id " + kernel_id);
  {
    std::lock_guard lock(kernel->mutex);
    if (kernel->closed) {
      return make_error(ErrorCode::kNotAlive, "kernel " + kernel_id + " was shut down");
    }
  }
  // The manager closes the old worker first: a running cell ends (its
  // execution says the worker is gone) and frees the transaction.
  Status restarted = kernel->manager->restart(settings_.init_timeout_s);
  std::lock_guard lock(kernel->mutex);
  kernel->last_used = std::chrono::steady_clock::now();
  kernel->last_used_text = utc_timestamp();
  return restarted;
}

std::string KernelPool::state_of(Kernel& kernel) {
  {
    std::lock_guard lock(kernel.mutex);
    if (kernel.closed) return "dead";
    if (kernel.running) return "busy";
  }
  return kernel.manager->is_alive() ? "idle" : "dead";
}

Json KernelPool::list() {
  std::vector<std::shared_ptr<Kernel>> kernels;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, kernel] : kernels_) kernels.push_back(kernel);
  }
  Json out = Json::array();
  for (auto& kernel : kernels) {
    Json row{{"kernel_id", kernel->id},
             {"language", kernel->language},
             {"state", state_of(*kernel)},
             {"created", kernel->created},
             {"workspace", kernel->workspace}};
    // Resident memory of the kernel's worker and of its standby (a second
    // started worker, counted against the machine like any).
    auto worker = kernel->manager->transport();
    auto pid = worker ? worker->local_pid() : std::nullopt;
    row["rss_bytes"] = pid ? kernel::tree_rss_bytes(*pid) : 0;
    auto standby = kernel->manager->standby_pid();
    row["standby_rss_bytes"] = standby ? kernel::tree_rss_bytes(*standby) : 0;
    std::lock_guard lock(kernel->mutex);
    row["last_used"] = kernel->last_used_text;
    row["cells_run"] = kernel->cells_run;
    out.push_back(std::move(row));
  }
  return out;
}

Json KernelPool::sandbox_description(const Kernel& kernel) const {
  const auto& box = kernel.manager->options().sandbox;
  if (!box) return Json{{"state", "disabled"}, {"enforced", false}};
  sandbox::SandboxStatus status = box->status();
  Json out{{"state", status.state},
           {"mode", status.mode},
           {"backend", status.backend},
           {"enforced", status.enforced},
           {"network", status.network_policy}};
  if (!status.warning.empty()) out["warning"] = status.warning;
  return out;
}

void KernelPool::remember(const std::shared_ptr<Execution>& execution) {
  std::lock_guard lock(mutex_);
  executions_[execution->id()] = execution;
  execution_order_.push_back(execution->id());
  // The oldest finished ones go; a running cell is never forgotten, and
  // one long cell does not keep every later execution either.
  for (auto it = execution_order_.begin();
       it != execution_order_.end() && execution_order_.size() > kExecutionsKept;) {
    auto found = executions_.find(*it);
    if (found != executions_.end() && !found->second->finished()) {
      ++it;
      continue;
    }
    if (found != executions_.end()) executions_.erase(found);
    it = execution_order_.erase(it);
  }
}

std::shared_ptr<Execution> KernelPool::find_execution(const std::string& execution_id) {
  std::lock_guard lock(mutex_);
  auto it = executions_.find(execution_id);
  return it == executions_.end() ? nullptr : it->second;
}

Result<std::shared_ptr<Execution>> KernelPool::start_execute(const std::shared_ptr<Kernel>& kernel,
                                                             const std::string& code,
                                                             std::optional<double> timeout_s,
                                                             CellBindings bindings,
                                                             bool on_this_thread) {
  auto started = register_cell(kernel, code, timeout_s, std::move(bindings), on_this_thread);
  // Outside the kernel's lock: the pool's lock is never taken under it
  // (housekeep takes them the other way round).
  if (started) remember(started.value());
  return started;
}

Result<std::shared_ptr<Execution>> KernelPool::register_cell(const std::shared_ptr<Kernel>& kernel,
                                                             const std::string& code,
                                                             std::optional<double> timeout_s,
                                                             CellBindings bindings,
                                                             bool on_this_thread) {
  std::lock_guard lock(kernel->mutex);
  if (kernel->closed) {
    return make_error(ErrorCode::kNotAlive, "kernel " + kernel->id + " was shut down");
  }
  if (kernel->running) {
    return make_error(ErrorCode::kBusy,
                      "kernel " + kernel->id + " is busy running execution " +
                          kernel->running->id() +
                          ": wait for it with get_execution, or stop it with interrupt");
  }
  if (!kernel->manager->is_alive()) {
    return make_error(ErrorCode::kNotAlive, "kernel " + kernel->id +
                                                "'s worker is dead (it exited or was killed): "
                                                "call restart_kernel for a fresh one");
  }
  // The previous cell's thread has cleared `running`, so it is at its end.
  if (kernel->runner.joinable()) kernel->runner.join();
  auto execution = std::make_shared<Execution>(uuid4(), kernel->id, kernel->cells_run + 1);
  kernel->running = execution;
  kernel->cells_run += 1;
  if (timeout_s) {
    kernel->deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(*timeout_s));
  }
  if (on_this_thread) return execution;
  kernel->runner = std::thread([kernel, execution, code, bindings = std::move(bindings)] {
    run_cell(kernel, execution, code, bindings);
  });
  return execution;
}

void run_cell(const std::shared_ptr<Kernel>& kernel, const std::shared_ptr<Execution>& execution,
              const std::string& code, const CellBindings& bindings) {
  std::weak_ptr<Execution> cell = execution;
  kernel->hooks->set_cell(bindings.approver, [cell](const kernel::Json& saved) {
    if (auto live = cell.lock()) live->add_artifact(saved);
  });
  Result<Json> result = make_error(ErrorCode::kSystem, "internal error");
  try {
    result = kernel->manager->execute(code, "user", std::nullopt, execution.get(), execution.get(),
                                      execution.get());
  } catch (const std::exception& error) {
    // Never the process's end (the runner thread has no other catch), and
    // the kernel is freed: the cell is reported failed.
    result = make_error(ErrorCode::kSystem, std::string("internal error: ") + error.what());
  }
  kernel->hooks->set_cell({}, {});
  std::lock_guard done(kernel->mutex);
  // An interrupt kept for this cell that it never took stops no later one.
  kernel->manager->forget_kept_interrupt();
  kernel->running.reset();
  kernel->deadline.reset();
  kernel->last_interrupt.reset();
  kernel->interrupts_sent = 0;
  kernel->last_used = std::chrono::steady_clock::now();
  kernel->last_used_text = utc_timestamp();
  execution->finish(result);
}

Status KernelPool::interrupt(const std::shared_ptr<Kernel>& kernel, StopReason reason,
                             const std::shared_ptr<Execution>& expected) {
  std::optional<Result<kernel::InterruptDelivery>> delivered;
  {
    // Under the kernel's lock: the execution cannot end between this check
    // and the interrupt (run_cell drops what is kept for its cell under the
    // same lock), so a kept interrupt never outlives it.
    std::lock_guard lock(kernel->mutex);
    const std::shared_ptr<Execution> running = kernel->running;
    if (!running || (expected && running != expected)) {
      return make_error(ErrorCode::kInvalidArgument, "kernel " + kernel->id + " runs no cell");
    }
    kernel->last_interrupt = std::chrono::steady_clock::now();
    kernel->interrupts_sent += 1;
    running->mark_stop(reason);
    // The execution may not have sent its cell yet: kept for it then.
    delivered = kernel->manager->interrupt(/*for_next_cell=*/true);
  }
  if (!*delivered) return std::move(*delivered).error();
  if (!delivered->value().delivered) {
    return make_error(ErrorCode::kSystem, "the interrupt was not delivered: " +
                                              delivered->value().reason.value_or("?"));
  }
  return {};
}

void KernelPool::housekeep() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kHousekeepingTick);
    if (stopping_) break;
    auto now = std::chrono::steady_clock::now();
    // With the execution seen overdue: a newer one is not timed out.
    std::vector<std::pair<std::shared_ptr<Kernel>, std::shared_ptr<Execution>>> overdue;
    std::vector<std::shared_ptr<Kernel>> again;
    std::vector<std::shared_ptr<Kernel>> stuck;
    std::vector<std::shared_ptr<Kernel>> idle;
    for (auto& [id, kernel] : kernels_) {
      std::lock_guard kernel_lock(kernel->mutex);
      if (kernel->running && kernel->deadline && *kernel->deadline <= now) {
        kernel->deadline.reset();
        overdue.emplace_back(kernel, kernel->running);
      } else if (kernel->running && kernel->last_interrupt &&
                 now - *kernel->last_interrupt >= std::chrono::seconds(1)) {
        if (kernel->interrupts_sent >= kInterruptsBeforeKill) {
          kernel->last_interrupt.reset();
          stuck.push_back(kernel);
        } else {
          kernel->last_interrupt = now;
          kernel->interrupts_sent += 1;
          again.push_back(kernel);
        }
      } else if (!kernel->running && settings_.idle_timeout.count() > 0 &&
                 now - kernel->last_used >= settings_.idle_timeout) {
        // Closed under the same lock start_execute checks: no cell can
        // start between this decision and the shutdown.
        kernel->closed = true;
        idle.push_back(kernel);
      }
    }
    for (auto& kernel : idle) kernels_.erase(kernel->id);
    const bool repoke = !idle.empty() || std::exchange(repoke_warm_, false);
    lock.unlock();
    for (auto& [kernel, execution] : overdue) {
      (void)interrupt(kernel, StopReason::kTimeout, execution);
    }
    for (auto& kernel : again) (void)kernel->manager->interrupt();
    for (auto& kernel : stuck) {
      std::fprintf(stderr, "openai4s-mcp: kernel %s ignored %d interrupts: its worker is killed\n",
                   kernel->id.c_str(), kInterruptsBeforeKill);
      kernel->manager->kill_worker();
    }
    for (auto& kernel : idle) {
      std::fprintf(stderr, "openai4s-mcp: kernel %s was idle for %llds: shut down\n",
                   kernel->id.c_str(), static_cast<long long>(settings_.idle_timeout.count()));
      close_kernel(kernel);
    }
    if (repoke) poke_warm_pools();
    lock.lock();
  }
}

void KernelPool::shutdown_all() {
  {
    std::lock_guard lock(job_ends_->mutex);
    job_ends_->pool = nullptr;
  }
  stop_warm_pools();
  std::map<std::string, std::shared_ptr<Kernel>> kernels;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    kernels.swap(kernels_);
  }
  wake_.notify_all();
  if (housekeeper_.joinable() && housekeeper_.get_id() != std::this_thread::get_id()) {
    housekeeper_.join();
  }
  for (auto& [id, kernel] : kernels) close_kernel(kernel);
}

}  // namespace o4s::mcp
