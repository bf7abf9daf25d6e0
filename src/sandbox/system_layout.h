// The read-only operating-system view every sandbox gets: the top-level
// system directories (or their merged-/usr symlinks), CPU topology for BLAS
// and os.cpu_count(), and masks over the secrets in /etc.
//
// The sandbox sees an allow-list, not the host root: the user's data, other
// projects, /var, /srv, /mnt, /opt and every home are absent unless they hold
// the worker's own runtime (added per kernel). Inside /etc, every entry that
// an unprivileged user could not read (shadow, ssh host keys, private TLS
// keys, database configs) is masked, so a daemon running as root -- whose
// sandbox uid maps to root and so owns those files -- leaks no more than an
// ordinary user would see.
#pragma once

#include <string>
#include <vector>

#include "sandbox/bwrap_command.h"

namespace o4s::sandbox {

struct SystemLayout {
  std::vector<FsOperation> operations;
  std::size_t masked_secrets = 0;
};

// Built on first use (one walk of /etc, about a millisecond), then cached.
const SystemLayout& system_layout();

// The same, for a tree rooted at `root` ("" = the real root): tests point it
// at a scratch directory.
SystemLayout build_system_layout(const std::string& root);

// Masks for every entry under `dir` (a path below `root`) that "others" may
// not read; a masked directory is not descended into.
std::vector<FsOperation> secret_masks(const std::string& root, const std::string& dir);

}  // namespace o4s::sandbox
