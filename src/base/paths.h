// Lexical path relations and strict resolution, shared by the host's
// workspace checks, the shell capability and the sandbox layout.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace o4s {

// True when `path` is `ancestor` or lies below it, comparing whole
// components ("/a/b" is not below "/a/bc"). Both must already be normal
// absolute paths; nothing is resolved here.
bool path_contains(std::string_view ancestor, std::string_view path);

// The directories strictly between `ancestor` and `path`, outermost first
// ("/w", "/w/a/b/c" -> "/w/a", "/w/a/b"); empty unless `path` lies below
// `ancestor`. Lexical, as path_contains.
std::vector<std::string> directories_between(std::string_view ancestor, std::string_view path);

// `path` made absolute against the current directory, nothing resolved
// ("." and ".." stay for a resolver that must see each component); "" is
// the current directory.
std::string absolute_path(const std::string& path);

// realpath(3): every component must exist and symlinks are resolved.
Result<std::string> real_path(const std::string& path);

}  // namespace o4s
