#include "host/workspace_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <vector>

#include "base/ascii.h"
#include "base/paths.h"
#include "base/sha256.h"
#include "base/unique_fd.h"

namespace o4s::host {

namespace {}  // namespace

std::string basename_of(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  auto slash = trimmed.find_last_of('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

std::string sanitize_filename(const std::string& name) {
  std::string out;
  bool in_run = false;
  for (char c : name) {
    bool ok = ascii::is_alnum(c) || c == '.' || c == '_' || c == '-';
    if (ok) {
      out.push_back(c);
      in_run = false;
    } else if (!in_run) {
      out.push_back('_');
      in_run = true;
    }
  }
  return out.empty() ? "artifact" : out;
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

Result<std::string> copy_and_hash(int from_fd, const std::string& to, long long* size_bytes) {
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!out) return system_error("create " + to, errno);
  Sha256 digest;
  std::vector<char> buffer(1 << 20);
  long long total = 0;
  for (;;) {
    ssize_t n = ::read(from_fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("read artifact source", errno);
    }
    if (n == 0) break;
    std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
    digest.update(chunk);
    while (!chunk.empty()) {
      ssize_t w = ::write(out.get(), chunk.data(), chunk.size());
      if (w < 0) {
        if (errno == EINTR) continue;
        return system_error("write " + to, errno);
      }
      chunk.remove_prefix(static_cast<std::size_t>(w));
    }
    total += n;
  }
  if (::fsync(out.get()) != 0) return system_error("fsync " + to, errno);
  if (size_bytes != nullptr) *size_bytes = total;
  return digest.hex_digest();
}

}  // namespace o4s::host
