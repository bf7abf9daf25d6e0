// Paths a cell names, resolved inside the session workspace.
#pragma once

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::host {

// Resolves `path` (relative to the workspace, or absolute inside it) with
// symlinks followed. An escape is kInvalidArgument
// ("path escapes the workspace: '<p>' (stay inside your working dir)");
// a missing file is kSystem/ENOENT.
Result<std::string> resolve_in_workspace(const std::string& workspace, const std::string& path);

std::string basename_of(const std::string& path);

struct OpenedFile {
  UniqueFd fd;
  std::string path;  // where the open fd really is (from /proc/self/fd)
  long long size = 0;
};

// Opens a regular file inside the workspace once, and proves it from the
// open fd (no check-then-use): the final component is not followed if it is
// a symlink, a FIFO or device is refused without blocking, and the fd's real
// path must be inside the workspace, whatever was swapped meanwhile.
Result<OpenedFile> open_regular_inside(const std::string& workspace, const std::string& path);

}  // namespace o4s::host
