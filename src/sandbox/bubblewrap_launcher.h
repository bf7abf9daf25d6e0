// The bubblewrap launcher (bubblewrap >= 0.8).
//
// Isolation: new user, PID, IPC, UTS (host name "openai4s") and (unless raw
// network is allowed) network namespaces; all capabilities dropped; no nested user namespaces;
// the seccomp policy; SIGKILL when the spawning thread dies.
// Filesystem: the read-only system layout (system_layout.h), fresh /dev and
// /proc, private size-capped tmpfs on /tmp, /dev/shm and the host home, the
// worker's runtime read-only, the workspace read-write.
// Environment: the caller's allowlisted environment goes to bubblewrap as its
// own environment (not --setenv: argv is world-readable in /proc, the
// environment is not), with TMPDIR and friends pointed at the private /tmp.
//
// One launcher per kernel: it also owns the kernel's pids cgroup, reused
// across restarts.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "sandbox/bwrap_command.h"
#include "sandbox/launcher.h"
#include "sandbox/sandbox_cgroup.h"
#include "sandbox/sandbox_identity.h"
#include "sandbox/sandbox_settings.h"
#include "sandbox/uid_lease.h"

namespace o4s::sandbox {

// What a cell sees as the machine's name (never the host's).
inline constexpr const char* kSandboxHostname = "openai4s";

// The isolation every bubblewrap run of ours shares (the facility probe and
// every kernel), without workspace, runtime or command; /etc's secrets are
// masked as far as `reader` (the sandbox's host ids) could read them.
BwrapCommand isolation_command(const std::string& bwrap_path, const SandboxSettings& settings,
                               const HostReader& reader);

class BubblewrapLauncher final : public Launcher {
 public:
  BubblewrapLauncher(std::string bwrap_path, SandboxSettings settings, IdentityPlan identity = {});
  std::string_view backend() const override { return "bubblewrap"; }
  Result<std::unique_ptr<PreparedLaunch>> prepare(const LaunchSpec& spec) override;

  // Puts the sandbox's processes into the kernel's envelope (its cgroups,
  // made on first use and reused across restarts) after the worker is
  // pinned; the rlimits are the per-process fallback. Returns how each
  // resource is enforced, for the status. `root_uid`: RLIMIT_NPROC does not
  // bind the host's root user.
  EnvelopeReport enter_envelope(const std::vector<pid_t>& pids, bool root_uid);
  std::optional<std::string> limit_hit() const override;
  std::optional<std::uint64_t> oom_kills() const override;
  // Kills what is left in the envelope, removes it, then releases the uid.
  void retire() override;
  void begin_generation() override;

  const SandboxSettings& settings() const { return settings_; }
  const std::string& bwrap_path() const { return bwrap_path_; }
  // Who this kernel's sandbox runs as on the host: a root daemon leases a
  // uid of the kernel's own on the first launch and keeps it across
  // restarts; `workspace` is searched for uids it was handed before.
  Result<SandboxIdentity> sandbox_identity(const std::string& workspace);

 private:
  std::string bwrap_path_;
  SandboxSettings settings_;
  IdentityPlan identity_;
  // Declared before the cgroup, so released after it killed what was left.
  std::mutex lease_mutex_;
  std::optional<UidLease> lease_;
  mutable std::mutex cgroup_mutex_;
  bool cgroup_tried_ = false;
  std::unique_ptr<SandboxCgroup> cgroup_;
  std::string cgroup_error_;
};

// Checks a workspace before it is bound writable: never "/", a system
// directory or an ancestor of one, nor anything under /proc, /sys or /dev.
Status check_workspace(const std::string& resolved_workspace);

// Read-only roots for the runtime: a directory is itself; a file (an
// interpreter) contributes the grandparent of its path as given and of its
// resolved path, as in .../venv/bin/python -> .../venv and /usr/bin/python3.11
// -> /usr. "/" is never a root, nor a whole top-level directory other than
// /usr: /tmp/x/python contributes /tmp/x, /opt/python the file alone.
std::vector<std::string> runtime_roots(const std::vector<std::string>& paths);

// Is `root` already shown read-only by another of `roots` (each bind costs
// bubblewrap a reread of the mount table)? Not when a `writable` bind holds
// it, and not when its path runs through a symbolic link.
bool shown_by_another_root(const std::string& root, const std::vector<std::string>& roots,
                           const std::vector<std::string>& writable);

}  // namespace o4s::sandbox
