// Resolving the workspace path a sandbox is asked for, without following a
// link a sandbox could have planted there.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "base/result.h"

namespace o4s::sandbox {

// realpath(3) of `path` (absolute), except that when `trusted_link_owner` is
// set a symlink owned by any other uid is not followed: the result is an
// error naming it. A daemon running as root passes 0: every sandbox it runs
// has a non-root uid, a cell can leave a symlink anywhere in its workspace,
// and a later workspace resolved through it would hand that cell's uid (with
// a write grant) a directory only root could reach.
Result<std::string> resolve_workspace(const std::string& path,
                                      std::optional<uid_t> trusted_link_owner);

}  // namespace o4s::sandbox
