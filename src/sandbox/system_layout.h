// The read-only operating-system view every sandbox gets: the top-level
// system directories (or their merged-/usr symlinks), CPU topology for BLAS
// and os.cpu_count(), and masks over the secrets in /etc.
//
// The sandbox sees an allow-list, not the host root: the user's data, other
// projects, /var, /srv, /mnt, /opt and every home are absent unless they hold
// the worker's own runtime (added per kernel). Inside /etc, every entry that
// "others" may not read (shadow, ssh host keys, private TLS keys, database
// configs) is a secret: it is masked whenever the sandbox's own ids could
// read it (its owner, its group, an ACL, or root), so a sandbox sees no more
// of /etc than an unprivileged stranger would. A secret the ids cannot read
// is left to the kernel's permission check: bind mounts are bubblewrap's
// dearest step (it rereads the mount table for each), and a root daemon's
// sandbox uid (nobody) would otherwise pay for a dozen masks that hide
// nothing.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/bwrap_command.h"

namespace o4s::sandbox {

// An /etc entry "others" may not read, with what decides who else may.
struct SecretEntry {
  FsOperation mask;  // kMaskFile or kMaskDir over it
  uid_t owner = 0;
  gid_t group = 0;
  bool has_acl = false;  // named users or groups may read it too
};

struct SystemLayout {
  std::vector<FsOperation> operations;  // without the secrets' masks
  std::vector<SecretEntry> secrets;
};

// The ids the sandbox's processes carry on the host, as the kernel's
// permission checks see them.
struct HostReader {
  uid_t uid = 0;
  std::vector<gid_t> groups;  // the primary gid and every supplementary one
};

// Could `reader` open `secret` by its ownership? Root always can; an owner or
// a group member might (the modes are not trusted to say more); an ACL might
// name anyone.
bool may_read(const SecretEntry& secret, const HostReader& reader);

// The masks `reader` needs over the layout's secrets.
std::vector<FsOperation> masks_for(const SystemLayout& layout, const HostReader& reader);

// Built on first use (one walk of /etc, about a millisecond), then cached.
const SystemLayout& system_layout();

// The same, for a tree rooted at `root` ("" = the real root): tests point it
// at a scratch directory.
SystemLayout build_system_layout(const std::string& root);

// Every entry under `dir` (a path below `root`) that "others" may not read; a
// secret directory is not descended into.
std::vector<SecretEntry> secrets_under(const std::string& root, const std::string& dir);

}  // namespace o4s::sandbox
