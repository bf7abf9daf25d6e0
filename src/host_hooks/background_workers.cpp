#include "host_hooks/background_workers.h"

#include <vector>

#include "base/random_id.h"
#include "host_hooks/background_job.h"

namespace o4s::host_hooks {

BackgroundWorkers::BackgroundWorkers(kernel::KernelOptions options, Admission admission,
                                     Released released)
    : options_(std::move(options)),
      admission_(std::move(admission)),
      released_(std::move(released)) {}

BackgroundWorkers::~BackgroundWorkers() { stop_all(); }

void BackgroundWorkers::set_environment(kernel::EnvMap environment) {
  std::lock_guard lock(mutex_);
  environment_ = std::move(environment);
}

kernel::KernelOptions BackgroundWorkers::job_options() const {
  kernel::KernelOptions options = options_;
  // The kernel's sandbox pins and retires its own worker; a job's worker
  // gets one of the same settings (mode, limits, mounts).
  if (options_.sandbox) {
    options.sandbox = std::make_shared<sandbox::KernelSandbox>(options_.sandbox->settings());
  }
  // A job runs once and is never restarted: a standby would be a second
  // worker for nothing.
  options.standby = false;
  return options;
}

Result<host::Json> BackgroundWorkers::start(const std::string& code, const std::string& origin,
                                            host::JobCaller caller,
                                            const host::HostSettings& settings) {
  std::lock_guard lock(mutex_);
  std::size_t running = 0;
  for (const auto& job : jobs_)
    if (!job->finished()) ++running;
  if (running >= kMaxRunning) {
    return host::Json{{"error", "exec_background: this kernel already runs " +
                                    std::to_string(kMaxRunning) +
                                    " background jobs; wait for one to end or stop one "
                                    "with host.exec_interrupt(exec_id)"}};
  }
  // Counted before the front door is asked, so two jobs starting at once
  // never both fit in its last slot.
  workers_->fetch_add(1);
  if (admission_) {
    if (auto refused = admission_()) {
      workers_->fetch_sub(1);
      return host::Json{{"error", "exec_background: " + *refused}};
    }
  }
  auto job = std::make_shared<BackgroundJob>("bg_" + random_hex(6), code);
  job->launch(JobLaunch{job_options(), environment_, std::move(caller), settings, code, origin,
                        workers_, released_});
  jobs_.push_back(job);
  forget_finished();
  return host::Json{{"exec_id", job->id()}, {"state", "starting"}};
}

void BackgroundWorkers::forget_finished() {
  std::size_t finished = 0;
  for (const auto& job : jobs_)
    if (job->finished()) ++finished;
  for (auto it = jobs_.begin(); it != jobs_.end() && finished > kMaxKept;) {
    if ((*it)->finished()) {
      // Its thread ends on its own once the worker is reaped; the last
      // reference (here or a caller's) joins it.
      it = jobs_.erase(it);
      --finished;
    } else {
      ++it;
    }
  }
}

std::shared_ptr<BackgroundJob> BackgroundWorkers::find(const std::string& exec_id) {
  std::lock_guard lock(mutex_);
  for (const auto& job : jobs_) {
    if (job->id() == exec_id) return job;
  }
  return nullptr;
}

std::optional<host::Json> BackgroundWorkers::peek(const std::string& exec_id) {
  auto job = find(exec_id);
  if (!job) return std::nullopt;
  return job->describe(true);
}

std::optional<host::Json> BackgroundWorkers::interrupt(const std::string& exec_id) {
  auto job = find(exec_id);
  if (!job) return std::nullopt;
  return job->interrupt();
}

host::Json BackgroundWorkers::list() {
  std::vector<std::shared_ptr<BackgroundJob>> jobs;
  {
    std::lock_guard lock(mutex_);
    jobs.assign(jobs_.begin(), jobs_.end());
  }
  host::Json listed = host::Json::array();
  for (const auto& job : jobs) listed.push_back(job->describe(false));
  return listed;
}

void BackgroundWorkers::stop_all() {
  std::vector<std::shared_ptr<BackgroundJob>> jobs;
  {
    std::lock_guard lock(mutex_);
    jobs.assign(jobs_.begin(), jobs_.end());
  }
  // Outside the lock: a job's thread may be in a host call that lists jobs.
  for (const auto& job : jobs) job->stop();
}

}  // namespace o4s::host_hooks
