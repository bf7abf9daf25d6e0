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

// {path, size, offset, length, encoding, content, eof}; the bytes are text
// when they are valid UTF-8, else base64.
Result<Json> read_workspace_file(const std::string& workspace, const std::string& path,
                                 long long offset, long long length);

// Creates or replaces the file (and missing parent directories). Each
// directory is opened without following a symlink, and so is the file.
Result<Json> write_workspace_file(const std::string& workspace, const std::string& path,
                                  const std::string& bytes);

}  // namespace o4s::mcp
