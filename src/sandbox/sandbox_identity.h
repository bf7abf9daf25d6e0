// Who a sandbox is on the host. bubblewrap maps the sandbox's user to the
// uid that started it, so a daemon running as root would hand every cell the
// host's root uid: host sysctls through /proc/sys, set-uid-root files left
// in the workspace. A root daemon therefore starts bubblewrap as an
// unprivileged host uid (the spawned child drops the ids before it execs
// bubblewrap: proc::SpawnRequest::credentials), and a non-root daemon keeps
// its own.
//
// Which uid: unless one fixed uid is configured (OPENAI4S_SANDBOX_UID), a
// root daemon gives each kernel a uid and gid of its own, leased for the
// kernel's life (uid_lease.h): Linux counts inotify instances, message
// queue bytes, queued signals and processes per uid, so kernels sharing one
// could starve each other. The status says what a shared uid shares.
//
// Ownership: the cell's files are owned by that uid. A workspace directory
// the sandbox uid does not own gets a POSIX ACL entry granting that uid rwx
// on the directory itself (not its contents), so the cell can create files
// there; host files inside stay readable and writable as their own modes
// allow.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sandbox/sandbox_settings.h"
#include "sandbox/system_layout.h"

namespace o4s::sandbox {

inline constexpr std::uint32_t kNobody = 65534;

struct SandboxIdentity {
  std::uint32_t uid = 0;  // host uid of every sandbox process
  std::uint32_t gid = 0;
  bool dropped = false;   // a root daemon switches to uid/gid before bubblewrap
  bool own_uid = false;   // leased for this kernel alone (uid_lease.h)
  std::string chosen_by;  // "OPENAI4S_SANDBOX_UID", "a uid of the kernel's own", ...
  std::string shared;     // what sharing the uid shares, and why; empty when own
};

// The ids the sandbox's processes carry on the host: a dropped identity's
// uid and gid alone (the spawned child clears the supplementary groups before
// it execs bubblewrap), else the daemon's own effective ids and groups.
HostReader host_reader_of(const SandboxIdentity& identity);

// What the facility probe established for a root daemon (facility.h).
struct IdentityPlan {
  bool drops_root = false;  // bubblewrap starts as the uid
  std::string problem;      // why a root daemon cannot drop root, if it cannot
};

// The identity for a sandbox started by a daemon whose real uid/gid are
// `host_uid`/`host_gid`; `own_uid`: the uid leased for the kernel, if any
// (a root daemon without OPENAI4S_SANDBOX_UID runs as it; without one, as
// nobody: only the facility probe does).
SandboxIdentity choose_identity(const SandboxSettings& settings, uid_t host_uid, gid_t host_gid,
                                std::optional<std::uint32_t> own_uid);

// Named-user entries of the directory's access ACL: the uids earlier
// sandboxes of a workspace were handed it as (a new kernel prefers them).
std::vector<std::uint32_t> acl_user_ids(const std::string& directory);

// Lets the sandbox uid create files in a workspace directory it does not own
// (see above); a no-op unless the identity drops root.
Status hand_over_workspace(const SandboxIdentity& identity, const std::string& workspace);

class HeldPath;
// hand_over_workspace on a workspace held open (what the launcher uses).
Status hand_over_held_workspace(const SandboxIdentity& identity, const HeldPath& held);

// Lets the sandbox uid walk through every ancestor of `path` (search-only
// ACL entries where the mode bars it), as a bind source under root's 0700
// home needs (the runtime of a checkout in /root). No-op unless dropped.
Status let_walk_to(const SandboxIdentity& identity, const std::string& path);

// Lets the sandbox uid walk into a directory the host keeps for this kernel
// (the R kernel's 0700 sink directory) to open what the host put there for
// it (fifos it may write); search only, no listing. No-op unless dropped.
Status hand_over_exchange_dir(const SandboxIdentity& identity, const std::string& dir);

}  // namespace o4s::sandbox
