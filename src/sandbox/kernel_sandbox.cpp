#include "sandbox/kernel_sandbox.h"

#include <cstdio>

#include "base/paths.h"
#include "sandbox/bubblewrap_launcher.h"
#include "sandbox/facility.h"
#include "sandbox/seccomp_policy.h"

namespace o4s::sandbox {

namespace {

// Printed once per process, like the reference: a daemon starting many
// kernels must not bury its log in identical banners; every kernel's status
// still carries the warning.
void warn_once(const std::string& warning) {
  static std::once_flag once;
  std::call_once(once, [&] { std::fprintf(stderr, "%s\n", warning.c_str()); });
}

}  // namespace

KernelSandbox::KernelSandbox(SandboxSettings settings) : settings_(std::move(settings)) {
  status_.mode = std::string(mode_name(settings_.mode));
  status_.process_limit = "not applied: no sandbox";
}

Result<Launcher*> KernelSandbox::launcher() {
  std::lock_guard launch(launch_mutex_);
  if (launcher_) return launcher_.get();
  if (settings_.mode == SandboxMode::kOff) {
    std::lock_guard lock(mutex_);
    status_.state = "disabled";
    status_.detail = "OPENAI4S_KERNEL_SANDBOX=off: this kernel runs without an OS sandbox";
    launcher_ = std::make_unique<DirectLauncher>();
    return launcher_.get();
  }
  Facility facility = probe_facility(settings_);
  if (facility.available) {
    std::lock_guard lock(mutex_);
    status_.version = facility.version;
    launcher_ = std::make_unique<BubblewrapLauncher>(
        facility.bwrap_path, settings_,
        IdentityPlan{facility.drops_root, facility.identity_problem});
    return launcher_.get();
  }
  const Diagnosis& diagnosis = *facility.failure;
  if (settings_.mode == SandboxMode::kEnforce) {
    return make_error(ErrorCode::kSandboxUnavailable,
                      "OPENAI4S_KERNEL_SANDBOX=enforce, but " + diagnosis.message);
  }
  std::string warning = security_warning(diagnosis.message);
  warn_once(warning);
  std::lock_guard lock(mutex_);
  status_.state = "unavailable";
  status_.reason = std::string(cause_name(diagnosis.cause));
  status_.detail = diagnosis.message;
  status_.warning = std::move(warning);
  launcher_ = std::make_unique<DirectLauncher>();
  return launcher_.get();
}

Result<std::unique_ptr<PreparedLaunch>> KernelSandbox::prepare(const LaunchSpec& spec,
                                                               bool replaces_worker) {
  auto chosen = launcher();
  if (!chosen) return std::move(chosen).error();
  if (replaces_worker) {
    // A new launch means the previous worker is gone (restart closes it
    // first): its pin must not be signalled any more.
    std::lock_guard lock(mutex_);
    pin_.reset();
    // The launch spec's path is left unresolved for the launcher's own
    // resolution; the status names the directory itself.
    auto resolved = real_path(spec.workspace);
    status_.workspace = resolved ? *resolved : spec.workspace;
  }
  return chosen.value()->prepare(spec);
}

void KernelSandbox::adopt(LaunchOutcome outcome) {
  std::lock_guard lock(mutex_);
  pin_ = std::move(outcome.pin);
  if (!outcome.self_test) return;  // unsandboxed: the status set up front stands
  status_.state = "enabled";
  status_.backend = "bubblewrap";
  status_.enforced = true;
  status_.self_test_passed = outcome.self_test->passed();
  status_.checks = outcome.self_test->checks;
  status_.network_policy = settings_.allow_raw_network ? "raw_allowed" : "blocked";
  status_.temp_dir = "/tmp";
  status_.limits = settings_.limits;
  status_.process_limit = outcome.process_limit;
  status_.envelope = outcome.envelope;
  status_.seccomp = seccomp_summary();
  status_.identity = outcome.identity;
  status_.detail = status_.version + " sandbox; self-test passed (" +
                   std::to_string(status_.checks.size()) + " checks)";
  if (outcome.degraded) {
    status_.state = "degraded";
    status_.detail = status_.version + " sandbox, degraded: " + *outcome.degraded;
    status_.warning = security_warning("the sandbox runs degraded: " + *outcome.degraded);
    warn_once(status_.warning);
  }
}

void KernelSandbox::adopt_standby(LaunchOutcome outcome) {
  {
    std::lock_guard launch(launch_mutex_);
    if (launcher_) launcher_->begin_generation();
  }
  adopt(std::move(outcome));
}

std::optional<KernelSandbox::InterruptResult> KernelSandbox::interrupt(int signum) {
  std::lock_guard lock(mutex_);
  if (!pin_) return std::nullopt;
  Status sent = signal_worker_main_thread(*pin_, signum);
  if (sent) return InterruptResult{true, std::nullopt};
  std::string gap = sent.error().message;
  if (!gap_reported_) {
    gap_reported_ = true;
    std::fprintf(stderr, "openai4s: a kernel interrupt was not delivered: %s\n", gap.c_str());
  }
  return InterruptResult{false, std::move(gap)};
}

std::optional<int> KernelSandbox::worker_pidfd() const {
  std::lock_guard lock(mutex_);
  if (!pin_ || !pin_->worker_pidfd) return std::nullopt;
  return pin_->worker_pidfd.get();
}

std::optional<std::string> KernelSandbox::limit_hit() const {
  std::lock_guard launch(launch_mutex_);
  if (!launcher_) return std::nullopt;
  return launcher_->limit_hit();
}

void KernelSandbox::retire() {
  {
    std::lock_guard lock(mutex_);
    pin_.reset();
  }
  std::lock_guard launch(launch_mutex_);
  if (launcher_) launcher_->retire();
}

std::optional<std::uint64_t> KernelSandbox::oom_kills() const {
  std::lock_guard launch(launch_mutex_);
  if (!launcher_) return std::nullopt;
  return launcher_->oom_kills();
}

SandboxStatus KernelSandbox::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

}  // namespace o4s::sandbox
