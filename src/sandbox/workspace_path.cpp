#include "sandbox/workspace_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>

#include "base/paths.h"

namespace o4s::sandbox {

namespace {

// As the kernel's own bound on links followed in one lookup.
constexpr int kMaxLinks = 40;

void push_components_front(std::deque<std::string>& pending, const std::string& path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  pending.insert(pending.begin(), parts.begin(), parts.end());
}

std::string parent_of(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

Result<std::string> resolve_workspace(const std::string& path,
                                      std::optional<uid_t> trusted_link_owner) {
  if (!trusted_link_owner) return real_path(path);
  if (path.empty() || path.front() != '/') {
    return make_error(ErrorCode::kSandboxUnavailable,
                      "the workspace " + path + " is not an absolute path");
  }
  std::deque<std::string> pending;
  push_components_front(pending, path);
  std::string current = "/";
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      current = parent_of(current);
      continue;
    }
    std::string next = current == "/" ? "/" + part : current + "/" + part;
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) return system_error("the workspace " + path, errno);
    if (!S_ISLNK(st.st_mode)) {
      current = std::move(next);
      continue;
    }
    if (st.st_uid != *trusted_link_owner) {
      return make_error(ErrorCode::kSandboxUnavailable,
                        "the workspace " + path + " passes through " + next +
                            ", a symlink owned by uid " + std::to_string(st.st_uid) +
                            "; a daemon running as root follows only root's symlinks to a "
                            "workspace (a sandbox may have left this one): pass the real path");
    }
    if (++links > kMaxLinks) return system_error("the workspace " + path, ELOOP);
    std::string target(PATH_MAX, '\0');
    ssize_t n = ::readlink(next.c_str(), target.data(), target.size());
    if (n < 0) return system_error("readlink " + next, errno);
    if (static_cast<std::size_t>(n) == target.size()) {
      return system_error("readlink " + next, ENAMETOOLONG);
    }
    target.resize(static_cast<std::size_t>(n));
    if (!target.empty() && target.front() == '/') current = "/";
    push_components_front(pending, target);
  }
  return current;
}

Result<HeldPath> HeldPath::open(const std::string& path) {
  HeldPath held;
  held.path_ = path;
  UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return system_error("open /", errno);
  held.fds_.push_back(std::move(root));
  std::deque<std::string> parts;
  push_components_front(parts, path);
  for (const auto& part : parts) {
    if (part == "." || part == "..") {
      return make_error(ErrorCode::kSandboxUnavailable,
                        "the path " + path + " is not a resolved path");
    }
    // O_NOFOLLOW with O_DIRECTORY: a symlink here (put there since the path
    // was resolved) fails instead of being followed.
    UniqueFd next(::openat(held.fds_.back().get(), part.c_str(),
                           O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      return make_error(ErrorCode::kSandboxUnavailable,
                        "the path " + path + " changed while it was being opened (" + part + ": " +
                            std::string(std::strerror(errno)) + "); try again");
    }
    held.fds_.push_back(std::move(next));
  }
  return held;
}

std::string HeldPath::stable(std::size_t i) const {
  return "/proc/self/fd/" + std::to_string(fds_[i].get());
}

}  // namespace o4s::sandbox
