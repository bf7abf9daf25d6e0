// One kernel's background jobs, each in a worker of its own (issue 30
// point 4): a second KernelManager with the calling kernel's options (its
// language, workspace, hidden paths) and a sandbox of the same settings,
// running the job's code as one cell on a thread of the job's own. Its
// stdout goes into a bounded OutputWindow; its host calls go to the
// dispatcher that started it, unattended.
//
// Lifetime: a job never outlives its kernel's worker generation. The
// kernel's restart and shutdown (KernelHooks::generation_ended) call
// stop_all(), as does the destructor: every job's worker is killed and
// reaped, and its thread joined, before they return.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "host/background_jobs.h"
#include "host/dispatcher.h"
#include "kernel/kernel_manager.h"

namespace o4s::host_hooks {

class BackgroundJob;

class BackgroundWorkers final : public host::BackgroundJobs {
 public:
  // Jobs running at once per kernel: each is a whole worker process, so
  // they count against the machine as kernels do.
  static constexpr std::size_t kMaxRunning = 4;
  // Finished jobs kept for peek and list (the oldest go first).
  static constexpr std::size_t kMaxKept = 32;

  // A front door's limit on workers, asked as a job starts (already counted
  // in running()): nullopt admits it, a text refuses it with that reason.
  using Admission = std::function<std::optional<std::string>()>;

  // Told on a job's thread each time its worker is counted out of
  // running(), whichever way the job ended: a front door whose limits count
  // jobs looks at its room again (the MCP server's warm pools refill).
  using Released = std::function<void()>;

  // `options`: the calling kernel's; each job's worker gets a copy with a
  // sandbox of its own (same settings).
  explicit BackgroundWorkers(kernel::KernelOptions options, Admission admission = {},
                             Released released = {});
  ~BackgroundWorkers() override;
  BackgroundWorkers(const BackgroundWorkers&) = delete;
  BackgroundWorkers& operator=(const BackgroundWorkers&) = delete;

  // The environment each job's worker is built from (a snapshot the
  // embedder takes where reading it is safe); unset: the live environment.
  void set_environment(kernel::EnvMap environment);

  Result<host::Json> start(const std::string& code, const std::string& origin,
                           host::JobCaller caller, const host::HostSettings& settings) override;
  std::optional<host::Json> peek(const std::string& exec_id) override;
  std::optional<host::Json> interrupt(const std::string& exec_id) override;
  host::Json list() override;
  void stop_all() override;
  std::size_t running() const override { return workers_->load(); }

 private:
  std::shared_ptr<BackgroundJob> find(const std::string& exec_id);
  kernel::KernelOptions job_options() const;
  // Drops the oldest finished jobs past kMaxKept (their threads joined).
  void forget_finished();

  const kernel::KernelOptions options_;
  const Admission admission_;
  const Released released_;
  // Jobs whose worker is starting or alive; each job's thread counts itself
  // out once its worker is reaped (it may outlive this object).
  const std::shared_ptr<std::atomic<std::size_t>> workers_ =
      std::make_shared<std::atomic<std::size_t>>(0);
  std::mutex mutex_;  // guards the members below
  std::optional<kernel::EnvMap> environment_;
  std::deque<std::shared_ptr<BackgroundJob>> jobs_;
};

}  // namespace o4s::host_hooks
