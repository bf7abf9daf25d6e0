// read_file and write_file: a kernel's workspace files, by the host's
// rules (no ".." and no symlink out of the workspace), bounded in size.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"

namespace o4s::mcp {

using Json = nlohmann::json;

constexpr std::size_t kWriteMaxBytes = 16u << 20;

// A directory's identity: a path that now leads elsewhere (a cell renamed
// the workspace and left a symlink) has another.
struct DirectoryId {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  bool operator==(const DirectoryId&) const = default;
};
Result<DirectoryId> directory_id(const std::string& path);

// {path, size, offset, length, encoding, content, eof}; the bytes are text
// when they are valid UTF-8, else base64.
// Both refuse when `workspace` no longer leads to the directory `pinned`.
Result<Json> read_workspace_file(const std::string& workspace, const DirectoryId& pinned,
                                 const std::string& path, long long offset, long long length);

// Creates or replaces the file (and missing parent directories). Each
// directory is opened without following a symlink, and so is the file.
Result<Json> write_workspace_file(const std::string& workspace, const DirectoryId& pinned,
                                  const std::string& path, const std::string& bytes);

}  // namespace o4s::mcp
