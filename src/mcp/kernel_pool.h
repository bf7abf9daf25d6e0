// The server's kernels: many per process, addressed by a random handle
// (UUIDv4) that outlives any one client connection. Each kernel is one C++
// KernelManager (with its own dispatcher bound to its workspace, and its own
// root frame in the store), driven exactly as the Jupyter kernel drives
// its one. A housekeeping thread enforces cell deadlines and idle timeouts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "host/dispatcher.h"
#include "host_hooks/native_hooks.h"
#include "kernel/kernel_manager.h"
#include "kernel/warm_pool.h"
#include "mcp/execution.h"
#include "mcp/workspace_files.h"
#include "sandbox/sandbox_settings.h"
#include "store/store.h"

namespace o4s::mcp {

struct PoolSettings {
  std::string python;                      // the worker's interpreter
  std::string repo_root;                   // the directory holding the openai4s package
  std::vector<std::string> r_worker_argv;  // empty: no R kernels
  std::string data_dir;                    // store, artifacts, default workspaces
  std::string workspace_root;              // a given workspace must lie under it
  std::size_t max_kernels = 32;
  std::chrono::seconds idle_timeout{3600};  // 0: never
  double init_timeout_s = 30.0;
  host::HostSettings host;
  // Started workers kept ready per language (`--pool python=N,r=M`), each
  // with its own fresh default workspace; create_kernel without a
  // workspace takes one. They count against max_kernels.
  std::map<std::string, std::size_t> warm_workers{{"python", 2}};
  // Each kernel keeps a standby worker, so restart_kernel swaps it in.
  bool standby = true;
};

// Parses `--pool`'s value: comma-separated LANGUAGE=N (python, r).
Result<std::map<std::string, std::size_t>> parse_warm_workers(const std::string& text);

struct Kernel {
  Kernel() = default;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel();

  std::string id;
  std::string language;
  std::string workspace;
  DirectoryId workspace_id;  // the workspace as created (see read_file/write_file)
  std::string frame_id;      // the kernel's root frame: "always" answers are scoped to it
  std::string created;       // ISO 8601 UTC
  std::unique_ptr<kernel::KernelManager> manager;
  std::shared_ptr<host_hooks::NativeKernelHooks> hooks;

  std::mutex mutex;  // guards what follows
  std::shared_ptr<Execution> running;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // An interrupt asked for the running cell: SIGINT is sent again each
  // second until it ends (one that lands before the cell's code runs, or
  // while it is in C code, is lost), and the worker is killed at last.
  std::optional<std::chrono::steady_clock::time_point> last_interrupt;
  int interrupts_sent = 0;
  std::thread runner;  // the running (or last) cell's thread
  std::chrono::steady_clock::time_point last_used = std::chrono::steady_clock::now();
  std::string last_used_text;
  int cells_run = 0;
  bool closed = false;
};

// The cell's own approver and artifact observer, bound for its run.
struct CellBindings {
  host::Approver approver;
};

// Runs a registered cell to its end on the calling thread.
void run_cell(const std::shared_ptr<Kernel>& kernel, const std::shared_ptr<Execution>& execution,
              const std::string& code, const CellBindings& bindings);

class KernelPool {
 public:
  static Result<std::unique_ptr<KernelPool>> open(PoolSettings settings);
  ~KernelPool();

  Result<std::shared_ptr<Kernel>> create(const std::string& language,
                                         const std::optional<std::string>& workspace);
  std::shared_ptr<Kernel> find(const std::string& kernel_id);
  Status shutdown(const std::string& kernel_id);
  Status restart(const std::string& kernel_id);
  Json list();
  // Starts a cell on its own thread; Busy (naming the running execution)
  // when the kernel already runs one. With `on_this_thread` the cell is
  // only registered: the caller runs it with run_cell (a caller that
  // would just wait for it saves a thread and a hand-off per cell).
  Result<std::shared_ptr<Execution>> start_execute(const std::shared_ptr<Kernel>& kernel,
                                                   const std::string& code,
                                                   std::optional<double> timeout_s,
                                                   CellBindings bindings,
                                                   bool on_this_thread = false);
  std::shared_ptr<Execution> find_execution(const std::string& execution_id);
  // SIGINT to the cell; it ends as "interrupted".
  // `expected`: only while that execution runs (none: whichever runs).
  Status interrupt(const std::shared_ptr<Kernel>& kernel, StopReason reason,
                   const std::shared_ptr<Execution>& expected = nullptr);
  Json sandbox_description(const Kernel& kernel) const;
  std::string state_of(Kernel& kernel);
  void shutdown_all();
  const PoolSettings& settings() const { return settings_; }
  // Ready pooled workers of `language` (0 without a pool); for tests.
  std::size_t warm_ready(const std::string& language);
  // Per language with a pool: its size, ready workers and their resident
  // memory ({"python": {"size", "ready", "rss_bytes"}}), for list_kernels.
  Json warm_memory();
  std::shared_ptr<store::Store> store() const { return store_; }

  // Kernels this pool does not run (the Slurm kernels, slurm_kernels.h)
  // follow its rules: a requested workspace is checked by choose_workspace,
  // and each holds a slot under --max-kernels and its workspace (which no
  // other kernel's may nest with) from hold_outside until release_outside.
  Result<std::string> choose_workspace(const std::string& kernel_id,
                                       const std::optional<std::string>& requested);
  Status hold_outside(const std::string& kernel_id, const std::string& workspace);
  void release_outside(const std::string& kernel_id);

 private:
  KernelPool(PoolSettings settings, sandbox::SandboxSettings sandbox,
             std::shared_ptr<store::Store> store);
  Status apart_from_others(const std::string& wanted, const std::string& root);
  void close_kernel(const std::shared_ptr<Kernel>& kernel);
  void housekeep();
  void remember(const std::shared_ptr<Execution>& execution);
  // create's steps: a slot under --max-kernels, the kernel's identity,
  // workspace and frame, its manager's options, its worker started.
  Status reserve_slot(const std::string& language);
  Status slot_free() const;  // under mutex_
  // Kernels (local, starting, on Slurm) and background jobs' workers: what
  // admission counts against --max-kernels. Pools and standbys fill only
  // the room these leave (and standbys give it back). Under mutex_.
  std::size_t workers_in_use() const;
  // Every pool's workers, as their last room checks left them. Under mutex_.
  std::size_t warm_total() const;
  // Kernels' standbys ready or being started. Under mutex_.
  std::size_t standbys_held() const;
  // Discards ready standbys while the workers exceed the limit.
  void trim_standbys();
  Result<std::shared_ptr<Kernel>> describe_kernel(const std::string& language,
                                                  const std::optional<std::string>& workspace,
                                                  const std::optional<std::string>& warm_workspace);
  kernel::KernelOptions kernel_options(const std::string& language,
                                       const std::string& workspace) const;
  Status start_manager(Kernel& kernel, std::optional<kernel::WarmWorker> warm);
  // The warm pools (kernel_pool_warm.cpp): one worker started for a
  // language's pool, a pooled one claimed for a new kernel, the pools
  // woken when a kernel ended, and stopped at shutdown.
  void open_warm_pools();
  Result<kernel::WarmWorker> start_warm(const std::string& language);
  Result<std::optional<kernel::WarmWorker>> claim_warm(const std::string& language);
  bool room_for_warm(const std::string& language, std::size_t held);
  void warm_released(const std::string& language, std::size_t held);
  void poke_warm_pools();
  // Held around a normal start of `language` (null without its pool).
  std::unique_ptr<kernel::WarmPool::FallbackStart> fallback_start(const std::string& language);
  void stop_warm_pools();
  // start_execute's part under the kernel's lock.
  Result<std::shared_ptr<Execution>> register_cell(const std::shared_ptr<Kernel>& kernel,
                                                   const std::string& code,
                                                   std::optional<double> timeout_s,
                                                   CellBindings bindings, bool on_this_thread);

  const PoolSettings settings_;
  const sandbox::SandboxSettings sandbox_settings_;
  std::shared_ptr<store::Store> store_;

  std::mutex mutex_;  // guards kernels_, executions_, stopping_
  std::map<std::string, std::shared_ptr<Kernel>> kernels_;
  std::size_t starting_ = 0;                    // kernels being created (counted against the limit)
  std::map<std::string, std::string> outside_;  // hold_outside's: kernel id -> workspace
  // Each pool's workers (ready and starting) as its last room check left
  // them: never below the truth, so all pools together stay in the limit.
  std::map<std::string, std::size_t> warm_held_;
  bool repoke_warm_ = false;  // a pool gave room back: the housekeeper wakes them all
  std::map<std::string, std::shared_ptr<Execution>> executions_;
  std::vector<std::string> execution_order_;  // oldest first, bounded
  bool stopping_ = false;
  // Who a background job's end pokes: the pools refill into the room its
  // worker left. The job's thread may outlive this object, so it holds
  // this, emptied by shutdown_all.
  struct JobEnds {
    std::mutex mutex;
    KernelPool* pool = nullptr;
  };
  const std::shared_ptr<JobEnds> job_ends_ = std::make_shared<JobEnds>();
  std::condition_variable wake_;
  std::thread housekeeper_;
  // Last: stopped (and their workers closed) before anything above goes.
  std::map<std::string, std::unique_ptr<kernel::WarmPool>> warm_;
};

}  // namespace o4s::mcp
