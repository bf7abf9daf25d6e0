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
#include <functional>
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
#include "mcp/kernel_pool.h"
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
  double start_timeout_s = 600.0;        // queueing included
  std::chrono::seconds idle_timeout{0};  // the server's --idle-timeout (0: never)
};

// One kernel: its bridge process and the cell it runs.
class SlurmKernel {
 public:
  SlurmKernel(std::string id, std::string language, std::string workspace);
  SlurmKernel(const SlurmKernel&) = delete;
  SlurmKernel& operator=(const SlurmKernel&) = delete;
  ~SlurmKernel();

  // A cell's approval question (its Jupyter kernel's prompt) put to the
  // client: what the bridge answers, {"value": "y"|"a"|"n"} or
  // {"cannot_ask": true}.
  using Asker =
      std::function<Json(const std::string& prompt, const std::shared_ptr<Execution>& execution)>;

  Status launch(const SlurmSettings& settings);
  // Sends a request and waits for its answer (start, restart, shutdown).
  Result<Json> call(const Json& request, std::chrono::milliseconds timeout);
  Result<std::shared_ptr<Execution>> execute(const std::string& code,
                                             std::optional<double> timeout_s, Asker ask);
  // The namespace's variables as list_variables gives them; Busy while a
  // cell runs (asking then would interrupt it).
  Result<Json> variables(long long limit);
  Status interrupt(StopReason reason);
  void close();
  Json describe();
  // No cell runs, and none has since `cutoff` (--idle-timeout).
  bool idle_since(std::chrono::steady_clock::time_point cutoff);

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
  void start_asking(const std::string& prompt);

  std::unique_ptr<proc::ChildProcess> process_;
  UniqueFd to_bridge_;
  UniqueFd from_bridge_;
  std::thread reader_;
  std::thread deadline_;
  std::thread asking_;  // the cell's approval question, put to the client

  std::mutex mutex_;  // guards what follows
  std::condition_variable changed_;
  std::deque<Json> answers_;  // replies to call(), in order
  bool bridge_gone_ = false;
  std::shared_ptr<Execution> running_;
  Asker asker_;  // the running cell's
  // The job the bridge last reported: scancelled should the bridge end
  // without shutting it down (killed), so no job waits for its time limit.
  std::string job_id_;
  bool shut_down_ = false;  // the bridge said the job was shut down
  bool closing_ = false;    // close() ended the bridge's input
  std::string state_ = "starting";
  int cells_run_ = 0;
  std::string last_used_;
  std::chrono::steady_clock::time_point last_used_at_ = std::chrono::steady_clock::now();
  std::mutex call_mutex_;      // one call() at a time
  std::mutex deadline_mutex_;  // guards deadline_ (two executes may race to it)
  std::mutex asking_mutex_;    // guards asking_
  std::mutex send_mutex_;      // one request line at a time on the pipe
};

// The server's Slurm kernels. They follow the local kernels' rules through
// the pool (kernel_pool.h): a requested workspace gets its checks, each
// kernel holds a slot under --max-kernels, and an idle one is shut down
// after --idle-timeout.
class SlurmKernels {
 public:
  SlurmKernels(SlurmSettings settings, KernelPool& pool);
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
                                       const std::optional<std::string>& requested);
  void housekeep();

  const SlurmSettings settings_;
  KernelPool& pool_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<SlurmKernel>> kernels_;
  std::map<std::string, std::shared_ptr<Execution>> executions_;
  std::deque<std::string> execution_order_;
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread housekeeper_;  // the idle timeout's (none without one)
};

}  // namespace o4s::mcp
