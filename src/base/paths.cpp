#include "base/paths.h"

#include <cerrno>
#include <cstdlib>

namespace o4s {

bool path_contains(std::string_view ancestor, std::string_view path) {
  if (ancestor == "/") return !path.empty() && path.front() == '/';
  if (path.size() < ancestor.size() || path.substr(0, ancestor.size()) != ancestor) return false;
  return path.size() == ancestor.size() || path[ancestor.size()] == '/';
}

Result<std::string> real_path(const std::string& path) {
  if (path.empty()) return system_error("realpath: ''", ENOENT);
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return system_error("realpath: " + path, errno);
  std::string out(resolved);
  std::free(resolved);
  return out;
}

}  // namespace o4s
