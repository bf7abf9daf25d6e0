// The MCP server's kernels that run as Slurm jobs (create_kernel with
// engine "slurm", or --engine slurm). The server does not launch them
// itself: each one is a small Python process (openai4s.slurm.mcp_bridge)
// that starts the kernel through jupyter_client and the `openai4s-slurm`
// provisioner, the same code path as Jupyter's, and relays cells,
// interrupts, restarts and the shutdown over a pipe of JSON lines. See
// docs/scale-out.md for why a bridge and not a C++ Jupyter client.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "mcp/execution.h"
#include "mcp/workspace_files.h"
#include "proc/child_process.h"

namespace o4s::mcp {

struct SlurmSettings {
  std::string python;     // runs the bridge (needs jupyter_client)
  std::string repo_root;  // the directory holding the openai4s package
  std::string data_dir;   // the server's: each job's record is copied here
  std::string workspace_root;
  // The kernelspecs `openai4s jupyter install --slurm` wrote.
  std::string python_kernelspec = "openai4s-python-slurm";
  std::string r_kernelspec = "openai4s-r-slurm";
  double start_timeout_s = 600.0;  // queueing included
};

// One kernel: its bridge process and the cell it runs.
class SlurmKernel {
 public:
  SlurmKernel(std::string id, std::string language, std::string workspace);
  SlurmKernel(const SlurmKernel&) = delete;
  SlurmKernel& operator=(const SlurmKernel&) = delete;
  ~SlurmKernel();

  Status launch(const SlurmSettings& settings);
  // Sends a request and waits for its answer (start, restart, shutdown).
  Result<Json> call(const Json& request, std::chrono::milliseconds timeout);
  Result<std::shared_ptr<Execution>> execute(const std::string& code,
                                             std::optional<double> timeout_s);
  Status interrupt(StopReason reason);
  void close();
  Json describe();

  const std::string id;
  const std::string language;
  const std::string workspace;
  const std::string created;
  DirectoryId workspace_id;  // as created (see read_file/write_file)

 private:
  bool send(const Json& request);
  void read_answers();
  void take(Json message);
  void watch_deadline(std::shared_ptr<Execution> execution, double timeout_s);

  std::unique_ptr<proc::ChildProcess> process_;
  UniqueFd to_bridge_;
  UniqueFd from_bridge_;
  std::thread reader_;
  std::thread deadline_;

  std::mutex mutex_;  // guards what follows
  std::condition_variable changed_;
  std::deque<Json> answers_;  // replies to call(), in order
  bool bridge_gone_ = false;
  std::shared_ptr<Execution> running_;
  std::string job_id_;
  std::string state_ = "starting";
  int cells_run_ = 0;
  std::string last_used_;
  std::mutex call_mutex_;      // one call() at a time
  std::mutex deadline_mutex_;  // guards deadline_ (two executes may race to it)
};

class SlurmKernels {
 public:
  explicit SlurmKernels(SlurmSettings settings) : settings_(std::move(settings)) {}
  ~SlurmKernels() { shutdown_all(); }

  Result<std::shared_ptr<SlurmKernel>> create(const std::string& language,
                                              const std::optional<std::string>& workspace);
  std::shared_ptr<SlurmKernel> find(const std::string& kernel_id);
  std::shared_ptr<Execution> find_execution(const std::string& execution_id);
  void remember(const std::shared_ptr<Execution>& execution);
  Status shutdown(const std::string& kernel_id);
  Status restart(const std::string& kernel_id);
  Json list();
  void shutdown_all();

 private:
  Result<std::string> choose_workspace(const std::string& id,
                                       const std::optional<std::string>& requested) const;

  const SlurmSettings settings_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<SlurmKernel>> kernels_;
  std::map<std::string, std::shared_ptr<Execution>> executions_;
  std::deque<std::string> execution_order_;
};

}  // namespace o4s::mcp
