// One background job: its worker's manager, its state, its bounded output,
// and the thread that starts the worker and runs the job's code as a cell.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "host/background_jobs.h"
#include "host/dispatcher.h"
#include "host/output_window.h"
#include "kernel/kernel_manager.h"

namespace o4s::host_hooks {

struct JobLaunch {
  kernel::KernelOptions options;  // with a sandbox of the job's own
  std::optional<kernel::EnvMap> environment;
  host::JobCaller caller;
  host::HostSettings settings;
  std::string code;
  std::string origin;
  // Decremented once the job's worker is reaped (BackgroundWorkers::running).
  std::shared_ptr<std::atomic<std::size_t>> workers;
  // Called right after that, on the job's thread (may be empty).
  std::function<void()> released;
};

class BackgroundJob {
 public:
  BackgroundJob(std::string id, std::string code);
  // Stops the worker and joins the thread (see stop()).
  ~BackgroundJob();
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  void launch(JobLaunch launch);
  // {exec_id, state, started_at, ended_at, wall_s, cpu_s, peak_rss_bytes,
  // output_bytes, dropped_bytes, error, code (its first line, cut)} and,
  // with_output, the bounded output so far.
  host::Json describe(bool with_output);
  host::Json interrupt();
  // Kills the worker (a running cell ends at once), waits for the thread
  // to reap it. Idempotent; safe from any thread but the job's own.
  void stop();
  bool finished();
  const std::string& id() const { return id_; }

 private:
  class Sink;
  void run(JobLaunch launch);
  // The cell's outcome as the job's final state.
  void conclude(const Result<host::Json>& outcome);
  void finish(std::string state, std::optional<std::string> error);
  void sample_usage();                // mutex_ held
  std::optional<pid_t> worker_pid();  // mutex_ held

  const std::string id_;
  const std::string code_;
  const std::string started_at_;
  const std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;  // guards everything below
  std::string state_ = "starting";
  std::optional<std::string> error_;
  std::optional<std::string> ended_at_;
  std::optional<std::chrono::steady_clock::time_point> ended_;
  host::OutputWindow output_;
  std::shared_ptr<kernel::KernelManager> manager_;
  bool interrupt_requested_ = false;
  bool stop_requested_ = false;
  double cpu_s_ = 0;
  std::uint64_t peak_rss_bytes_ = 0;
  std::mutex join_mutex_;  // one joiner at a time
  std::thread thread_;
};

}  // namespace o4s::host_hooks
