// Who a sandbox is on the host. bubblewrap maps the sandbox's user to the
// uid that started it, so a daemon running as root would hand every cell the
// host's root uid: host sysctls through /proc/sys, set-uid-root files left
// in the workspace. A root daemon therefore starts bubblewrap as an
// unprivileged host uid (the spawned child drops the ids before it execs
// bubblewrap: proc::SpawnRequest::credentials), and a non-root daemon keeps
// its own.
//
// Ownership: the cell's files are owned by that uid. Unless configured, it is
// the workspace's owner when that is not root (the user's files stay the
// user's), else nobody (65534). A workspace directory the sandbox uid does
// not own gets a POSIX ACL entry granting that uid rwx on the directory
// itself (not its contents), so the cell can create files there; host files
// inside stay readable and writable as their own modes allow.
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
  std::string chosen_by;  // "OPENAI4S_SANDBOX_UID", "the workspace owner", ...
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

// The identity for a sandbox of `workspace` started by a daemon whose real
// uid/gid are `host_uid`/`host_gid`; `workspace_owner` as stat() saw it.
SandboxIdentity choose_identity(const SandboxSettings& settings, uid_t host_uid, gid_t host_gid,
                                std::optional<std::pair<uid_t, gid_t>> workspace_owner);

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
