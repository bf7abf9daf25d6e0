// Lexical path relations and strict resolution, shared by the host's
// workspace checks, the shell capability and the sandbox layout.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace o4s {

// True when `path` is `ancestor` or lies below it, comparing whole
// components ("/a/b" is not below "/a/bc"). Both must already be normal
// absolute paths; nothing is resolved here.
bool path_contains(std::string_view ancestor, std::string_view path);

// realpath(3): every component must exist and symlinks are resolved.
Result<std::string> real_path(const std::string& path);

}  // namespace o4s
