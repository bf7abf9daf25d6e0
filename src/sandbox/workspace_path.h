// Resolving the workspace path a sandbox is asked for, without following a
// link a sandbox could have planted there.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::sandbox {

// realpath(3) of `path` (absolute), except that when `trusted_link_owner` is
// set a symlink owned by any other uid is not followed: the result is an
// error naming it. A daemon running as root passes 0: every sandbox it runs
// has a non-root uid, a cell can leave a symlink anywhere in its workspace,
// and a later workspace resolved through it would hand that cell's uid (with
// a write grant) a directory only root could reach.
Result<std::string> resolve_workspace(const std::string& path,
                                      std::optional<uid_t> trusted_link_owner);

// A directory path held open, component by component, none of them a
// symlink at the time of opening: `/`, then each directory down to the last.
// Acting through `stable(i)` (a /proc/self/fd path) afterwards reaches the
// directory that was checked, even if a live cell renames or swaps a
// component of the path meanwhile.
class HeldPath {
 public:
  static Result<HeldPath> open(const std::string& path);
  std::size_t size() const { return fds_.size(); }
  // The held directory of the i-th prefix (0: "/"; size() - 1: the path).
  std::string stable(std::size_t i) const;
  int fd(std::size_t i) const { return fds_[i].get(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<UniqueFd> fds_;
};

}  // namespace o4s::sandbox
