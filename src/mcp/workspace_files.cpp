#include "mcp/workspace_files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "base/paths.h"
#include "base/unique_fd.h"
#include "base/utf8.h"
#include "mcp/base64.h"

namespace o4s::mcp {

namespace {

Error refused(const std::string& why) { return make_error(ErrorCode::kInvalidArgument, why); }

// The path's components relative to the workspace; ".." anywhere, an empty
// path or an absolute path outside the workspace is refused.
Result<std::vector<std::string>> components_inside(const std::string& workspace,
                                                   const std::string& path) {
  if (path.empty()) return refused("path is empty");
  if (path.find('\0') != std::string::npos) return refused("path contains a NUL byte");
  std::string relative = path;
  if (path[0] == '/') {
    if (!path_contains(workspace, path) || path == workspace) {
      return refused("path escapes the workspace: '" + path + "' (use a path inside " + workspace +
                     ")");
    }
    relative = path.substr(workspace.size() + 1);
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    std::string part = relative.substr(start, end - start);
    if (part == "..") return refused("path escapes the workspace: '" + path + "' (no '..')");
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = end + 1;
  }
  if (parts.empty()) return refused("path names the workspace itself, not a file: '" + path + "'");
  return parts;
}

DirectoryId id_of(const struct stat& info) {
  return {static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino)};
}

Error moved(const std::string& workspace) {
  return refused("the workspace " + workspace +
                 " is no longer the directory the kernel was created with (it was moved or "
                 "replaced): create a new kernel");
}

// The kernel's workspace as a directory fd, checked to be the directory
// the kernel was created with: everything below is opened from it, so a
// path swapped after this check cannot lead elsewhere.
Result<UniqueFd> open_pinned(const std::string& workspace, const DirectoryId& pinned) {
  UniqueFd dir(::open(workspace.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
  if (!dir) return system_error("open " + workspace, errno);
  struct stat opened {};
  if (::fstat(dir.get(), &opened) != 0) return system_error("stat " + workspace, errno);
  if (!(id_of(opened) == pinned)) return moved(workspace);
  return dir;
}

// Opens `parts` below `dir` for reading, never leaving it: openat2 with
// RESOLVE_BENEATH (Linux 5.6) follows a symlink only while it stays
// inside; without openat2, no symlink is followed at all.
Result<UniqueFd> open_beneath(int dir, const std::vector<std::string>& parts,
                              const std::string& path) {
  std::string relative;
  for (const auto& part : parts) relative += (relative.empty() ? "" : "/") + part;
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof how);
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  if (errno == EXDEV || errno == ELOOP) {
    return refused("path escapes the workspace: '" + path + "' (stay inside your working dir)");
  }
  if (errno == ENOENT) return make_error(ErrorCode::kSystem, "no such file: " + path);
  if (errno != ENOSYS) return system_error("open " + path, errno);
  UniqueFd at(::dup(dir));
  if (!at) return system_error("dup", errno);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    int flags = i + 1 < parts.size() ? O_DIRECTORY | O_RDONLY : O_RDONLY | O_NONBLOCK;
    UniqueFd next(::openat(at.get(), parts[i].c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      if (errno == ELOOP) return refused("path goes through a symlink: '" + path + "'");
      return system_error("open " + path, errno);
    }
    at = std::move(next);
  }
  return at;
}

}  // namespace

Result<DirectoryId> directory_id(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return system_error("stat " + path, errno);
  if (!S_ISDIR(info.st_mode)) return refused("not a directory: " + path);
  return id_of(info);
}

Result<Json> read_workspace_file(const std::string& workspace, const DirectoryId& pinned,
                                 const std::string& path, long long offset, long long length) {
  auto parts = components_inside(workspace, path);
  if (!parts) return std::move(parts).error();
  auto dir = open_pinned(workspace, pinned);
  if (!dir) return std::move(dir).error();
  auto opened = open_beneath(dir.value().get(), parts.value(), path);
  if (!opened) return std::move(opened).error();
  struct stat info {};
  if (::fstat(opened.value().get(), &info) != 0) return system_error("stat " + path, errno);
  if (!S_ISREG(info.st_mode)) return refused("not a regular file: '" + path + "'");
  const int fd = opened.value().get();
  long long size = static_cast<long long>(info.st_size);
  // Both within [0, size]: no overflow whatever the client asked.
  long long start = std::clamp(offset, 0LL, size);
  long long count = std::clamp(length, 0LL, size - start);
  std::string bytes(static_cast<std::size_t>(count), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n =
        ::pread(fd, bytes.data() + done, bytes.size() - done, start + static_cast<long long>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("read " + path, errno);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  bool text = utf8::replace_invalid(bytes) == bytes;
  return Json{{"path", path},
              {"size", size},
              {"offset", start},
              {"length", static_cast<long long>(bytes.size())},
              {"encoding", text ? "utf-8" : "base64"},
              {"content", text ? bytes : base64_encode(bytes)},
              {"eof", start + static_cast<long long>(bytes.size()) >= size}};
}

Result<Json> write_workspace_file(const std::string& workspace, const DirectoryId& pinned,
                                  const std::string& path, const std::string& bytes) {
  if (bytes.size() > kWriteMaxBytes) {
    return refused("content is " + std::to_string(bytes.size()) +
                   " bytes; write_file takes at most 16 MiB per call");
  }
  auto root = real_path(workspace);
  if (!root) return std::move(root).error();
  auto parts = components_inside(root.value(), path);
  if (!parts) return std::move(parts).error();
  // The directory opened is the kernel's own: everything below is opened
  // from this fd without following symlinks.
  auto pinned_dir = open_pinned(root.value(), pinned);
  if (!pinned_dir) return std::move(pinned_dir).error();
  UniqueFd dir = std::move(pinned_dir).value();
  const std::vector<std::string>& names = parts.value();
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    if (::mkdirat(dir.get(), names[i].c_str(), 0755) != 0 && errno != EEXIST) {
      return system_error("mkdir " + names[i], errno);
    }
    // O_NOFOLLOW: a directory swapped for a symlink (by a cell) is refused.
    UniqueFd next(
        ::openat(dir.get(), names[i].c_str(), O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      if (errno == ELOOP || errno == ENOTDIR) {
        return refused("path goes through a symlink or a file: '" + names[i] + "' in '" + path +
                       "'");
      }
      return system_error("open " + names[i], errno);
    }
    dir = std::move(next);
  }
  UniqueFd file(::openat(dir.get(), names.back().c_str(),
                         O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
  if (!file) {
    if (errno == ELOOP) return refused("path is a symlink: '" + path + "' (not followed)");
    return system_error("open " + path, errno);
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) return system_error("stat " + path, errno);
  if (!S_ISREG(info.st_mode)) return refused("not a regular file: '" + path + "'");
  if (::ftruncate(file.get(), 0) != 0) return system_error("truncate " + path, errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(file.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("write " + path, errno);
    done += static_cast<std::size_t>(n);
  }
  return Json{{"path", path}, {"bytes_written", static_cast<long long>(done)}};
}

}  // namespace o4s::mcp
