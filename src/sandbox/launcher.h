// How a worker process is launched: directly, or inside a sandbox. A launch
// has two halves around the spawn itself, which stays with the caller (the
// kernel's transport, on the supervisor thread): prepare() turns the
// worker's spawn request into the one to execute, and finish() -- called
// right after the spawn, before the host sends the worker anything --
// identifies the real worker process, applies limits and proves the sandbox.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "proc/spawn.h"
#include "sandbox/resource_limits.h"
#include "sandbox/self_test.h"
#include "sandbox/worker_pin.h"

namespace o4s::sandbox {

struct LaunchSpec {
  proc::SpawnRequest request;  // the worker as it would run unsandboxed
  std::string workspace;       // absolute; the one writable host directory
  // Files and directories the worker runs from (its interpreter, the
  // package source, a conda prefix): readable, never writable.
  std::vector<std::string> runtime_paths;
  // Host directories the worker must not see even where a visible path
  // contains them (the dispatcher's store inside the workspace).
  std::vector<std::string> hidden_paths;
  // Host directories the host itself owns for this kernel (the R kernel's
  // sink fifos): bound read-write at the same path. Absolute and resolved.
  std::vector<std::string> host_exchange_dirs;
};

// What finish() established about the worker.
struct LaunchOutcome {
  std::optional<PinnedWorker> pin;  // set when the worker is not the spawned process
  std::optional<SelfTestReport> self_test;
  std::string process_limit;  // how the process limit is enforced, for the status
  EnvelopeReport envelope;
  SandboxIdentity identity;  // who the sandbox is on the host
  // Set when auto mode runs this worker although host-root checks failed:
  // the failures, for the status and the warning.
  std::optional<std::string> degraded;
};

// The spawned launcher process as finish() may use it.
struct SpawnedLauncher {
  pid_t pid = -1;
  int pidfd = -1;  // borrowed
  // What it wrote to stderr; waits (bounded) for it to exit first, so a
  // failure message is whole.
  std::function<std::string()> stderr_after_exit;
};

class PreparedLaunch {
 public:
  virtual ~PreparedLaunch() = default;
  virtual const proc::SpawnRequest& request() const = 0;
  // A failure here means the worker must not be used: the caller destroys
  // the spawned process (its group is killed and reaped).
  virtual Result<LaunchOutcome> finish(const SpawnedLauncher& spawned) = 0;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual std::string_view backend() const = 0;
  virtual Result<std::unique_ptr<PreparedLaunch>> prepare(const LaunchSpec& spec) = 0;
  // Which of the sandbox's limits ended its last worker, if one did.
  virtual std::optional<std::string> limit_hit() const { return std::nullopt; }
  // The kernel was shut down and its worker is gone: free what the
  // launcher holds for it (its envelope, its uid). A later launch takes
  // them anew.
  virtual void retire() {}
  // A new worker generation begins in the envelope (a standby started
  // earlier replaces the worker): its CPU, OOM and fork baselines restart.
  virtual void begin_generation() {}
  // The envelope's OOM-kill count so far (SandboxCgroup::oom_kills).
  virtual std::optional<std::uint64_t> oom_kills() const { return std::nullopt; }
};

class WorkerCgroup;

// No sandbox: the request runs as given, but contained (docs/sandbox.md):
// the worker is a subreaper with a mark (proc/descendants.h), and where
// this process may make cgroups, each worker gets one of its own, which
// the next launch (for a worker that has exited) or retire() empties.
class DirectLauncher final : public Launcher {
 public:
  DirectLauncher();
  ~DirectLauncher() override;
  std::string_view backend() const override { return "none"; }
  Result<std::unique_ptr<PreparedLaunch>> prepare(const LaunchSpec& spec) override;
  void retire() override;
  // Puts a just-launched worker in a cgroup of its own, where one can be
  // made (before the worker runs anything of a cell). Best effort.
  void contain(pid_t pid);

 private:
  struct Contained;
  void end_exited_workers();
  std::mutex mutex_;
  std::vector<Contained> contained_;  // guarded by mutex_
};

}  // namespace o4s::sandbox
