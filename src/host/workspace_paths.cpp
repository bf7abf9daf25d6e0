#include "host/workspace_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/paths.h"
#include "base/unique_fd.h"

namespace o4s::host {

namespace {}  // namespace

std::string basename_of(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  auto slash = trimmed.find_last_of('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

Result<std::string> resolve_in_workspace(const std::string& workspace, const std::string& path) {
  auto root = real_path(workspace);
  if (!root) return std::move(root).error();
  std::string candidate = !path.empty() && path[0] == '/' ? path : root.value() + "/" + path;
  auto resolved = real_path(candidate);
  if (!resolved) {
    if (resolved.error().sys_errno == ENOENT) {
      Error missing = make_error(ErrorCode::kSystem, "no such file: " + path);
      missing.sys_errno = ENOENT;
      return missing;
    }
    return std::move(resolved).error();
  }
  if (!path_contains(root.value(), resolved.value())) {
    return make_error(ErrorCode::kInvalidArgument,
                      "path escapes the workspace: '" + path + "' (stay inside your working dir)");
  }
  return resolved;
}

Result<OpenedFile> open_regular_inside(const std::string& workspace, const std::string& path) {
  auto resolved = resolve_in_workspace(workspace, path);
  if (!resolved) return std::move(resolved).error();
  auto root = real_path(workspace);
  if (!root) return std::move(root).error();
  UniqueFd fd(::open(resolved->c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    Error error = system_error("open " + path, errno);
    if (error.sys_errno == ENOENT) error.message = "no such file: " + path;
    return error;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return system_error("stat " + path, errno);
  if (!S_ISREG(info.st_mode)) {
    Error error = make_error(ErrorCode::kSystem, "not a regular file: " + path);
    error.sys_errno = ENOENT;
    return error;
  }
  char link[PATH_MAX];
  std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
  ssize_t n = ::readlink(proc.c_str(), link, sizeof link - 1);
  if (n < 0) return system_error("readlink " + proc, errno);
  std::string actual(link, static_cast<std::size_t>(n));
  if (!path_contains(root.value(), actual)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "path escapes the workspace: '" + path + "' (stay inside your working dir)");
  }
  // Reads from a regular file never block; drop O_NONBLOCK anyway so the
  // flag cannot surprise a later reader of this fd.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return OpenedFile{std::move(fd), std::move(actual), static_cast<long long>(info.st_size)};
}

}  // namespace o4s::host
