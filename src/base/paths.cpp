#include "base/paths.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace o4s {

bool path_contains(std::string_view ancestor, std::string_view path) {
  if (ancestor == "/") return !path.empty() && path.front() == '/';
  if (path.size() < ancestor.size() || path.substr(0, ancestor.size()) != ancestor) return false;
  return path.size() == ancestor.size() || path[ancestor.size()] == '/';
}

std::vector<std::string> directories_between(std::string_view ancestor, std::string_view path) {
  std::vector<std::string> between;
  if (ancestor == path || !path_contains(ancestor, path)) return between;
  // Each '/' after the ancestor's own components ends one directory that
  // is still above `path` itself.
  std::size_t from = ancestor == "/" ? 1 : ancestor.size() + 1;
  for (std::size_t slash = path.find('/', from); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    between.emplace_back(path.substr(0, slash));
  }
  return between;
}

std::string absolute_path(const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  char* here = ::getcwd(nullptr, 0);
  std::string base = here != nullptr ? here : "/";
  std::free(here);
  if (path.empty()) return base;
  return base == "/" ? "/" + path : base + "/" + path;
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
