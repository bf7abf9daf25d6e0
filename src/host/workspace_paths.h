// Paths a cell names, resolved inside the session workspace.
#pragma once

#include <string>

#include "base/result.h"

namespace o4s::host {

// Resolves `path` (relative to the workspace, or absolute inside it) with
// symlinks followed. An escape is kInvalidArgument
// ("path escapes the workspace: '<p>' (stay inside your working dir)");
// a missing file is kSystem/ENOENT.
Result<std::string> resolve_in_workspace(const std::string& workspace, const std::string& path);

// Runs of characters outside [A-Za-z0-9._-] become "_".
std::string sanitize_filename(const std::string& name);

std::string basename_of(const std::string& path);

// Copies a regular file, hashing it on the way (one pass); returns the hex
// SHA-256 and writes the size.
Result<std::string> copy_and_hash(const std::string& from, const std::string& to,
                                  long long* size_bytes);

}  // namespace o4s::host
