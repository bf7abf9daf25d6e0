// One kernel's sandbox: resolves the mode against what the machine can do,
// owns the launcher across restarts, keeps the pinned worker for interrupts,
// and reports the state (spec kernel.md §2.13 `status`).
//
//   off      -> no sandbox, said plainly.
//   auto     -> bubblewrap when the facility probe passes; otherwise the
//               kernel runs unsandboxed and a one-time
//               "OPENAI4S SECURITY WARNING" names the cause.
//   enforce  -> bubblewrap or a kSandboxUnavailable error naming the cause.
// Once a launch is prepared with bubblewrap, any later failure (a launch, a
// self-test) is an error in every mode: a sandbox that misbehaves is not
// quietly replaced by no sandbox.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/result.h"
#include "sandbox/launcher.h"
#include "sandbox/sandbox_settings.h"
#include "sandbox/sandbox_status.h"

namespace o4s::sandbox {

class KernelSandbox {
 public:
  explicit KernelSandbox(SandboxSettings settings);
  KernelSandbox(const KernelSandbox&) = delete;
  KernelSandbox& operator=(const KernelSandbox&) = delete;

  // `replaces_worker` false: a standby launched beside the running worker
  // (kernel/standby.h), whose pin stays until the standby is adopted.
  Result<std::unique_ptr<PreparedLaunch>> prepare(const LaunchSpec& spec,
                                                  bool replaces_worker = true);
  // Records a successful launch (replacing the previous worker's pin).
  void adopt(LaunchOutcome outcome);
  // A standby launched beside the worker replaces it: its pin, and a new
  // generation of the envelope's limit baselines.
  void adopt_standby(LaunchOutcome outcome);

  struct InterruptResult {
    bool delivered = false;
    std::optional<std::string> gap;  // why not, when not
  };
  // nullopt: this sandbox does not own delivery (no pinned worker), so the
  // caller signals its local process as usual.
  std::optional<InterruptResult> interrupt(int signum);

  // The pinned worker's pidfd (owned here), for `_bwrap_worker_pidfd`.
  std::optional<int> worker_pidfd() const;
  SandboxStatus status() const;
  // Which of the sandbox's limits ended its last worker, if one did: the
  // cell's error says so.
  std::optional<std::string> limit_hit() const;
  // The kernel was shut down: frees its envelope and its uid (the
  // launcher's retire()); a restart afterwards takes them anew.
  void retire();
  // How many processes the OOM killer has ended in the sandbox so far;
  // nullopt without a memory cgroup. Read around each cell.
  std::optional<std::uint64_t> oom_kills() const;
  const SandboxSettings& settings() const { return settings_; }

 private:
  // Decides, once, how this kernel launches (see the class comment).
  Result<Launcher*> launcher();

  const SandboxSettings settings_;
  // Held while the launcher is chosen (a facility probe takes milliseconds,
  // at most 8 s); never needed by interrupt().
  mutable std::mutex launch_mutex_;
  std::unique_ptr<Launcher> launcher_;
  mutable std::mutex mutex_;  // guards the pin and the status
  std::optional<PinnedWorker> pin_;
  SandboxStatus status_;
  bool gap_reported_ = false;
};

}  // namespace o4s::sandbox
