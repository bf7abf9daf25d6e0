#include "sandbox/bwrap_mounts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/paths.h"
#include "sandbox/account_files.h"
#include "sandbox/bubblewrap_launcher.h"

namespace o4s::sandbox {

namespace {

using Kind = FsOperation::Kind;

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The first path component of `path` below `ancestor` ("/h/a/b" under "/h"
// -> "a").
std::optional<std::string> first_component_under(const std::string& ancestor,
                                                 const std::string& path) {
  if (!path_contains(ancestor, path) || path == ancestor) return std::nullopt;
  std::string rest = path.substr(ancestor == "/" ? 1 : ancestor.size() + 1);
  return rest.substr(0, rest.find('/'));
}

Error unavailable(std::string message) {
  return make_error(ErrorCode::kSandboxUnavailable, std::move(message));
}

}  // namespace

MountPlan::MountPlan(BwrapCommand& command, SelfTestExpectations& expect,
                     const SandboxIdentity& identity, std::string workspace)
    : command_(command),
      expect_(expect),
      identity_(identity),
      workspace_(std::move(workspace)),
      visible_{workspace_} {}

Result<int> MountPlan::open_source(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY));
  if (!fd) return system_error("open " + path, errno);
  sources_.push_back(std::move(fd));
  return sources_.back().get();
}

// The last directory of a held path, as a bind source of its own.
Result<int> MountPlan::held_source(const HeldPath& path) {
  UniqueFd fd(::fcntl(path.fd(path.size() - 1), F_DUPFD_CLOEXEC, 0));
  if (!fd) return system_error("dup the descriptor of " + path.path(), errno);
  sources_.push_back(std::move(fd));
  return sources_.back().get();
}

// A directory of the workspace, opened without following a symlink.
Result<int> MountPlan::held_fd(const std::string& path) {
  auto opened = HeldPath::open(path);
  if (!opened) return std::move(opened).error();
  return held_source(*opened);
}

bool MountPlan::visible(const std::string& path) const {
  return std::any_of(visible_.begin(), visible_.end(),
                     [&](const std::string& root) { return path_contains(root, path); });
}

Status MountPlan::bind_runtime(const std::vector<std::string>& readable) {
  for (const auto& root : readable) {
    // The system layout already shows these read-only.
    if (path_contains("/usr", root) || path_contains("/etc", root)) continue;
    if (shown_by_another_root(root, readable, {workspace_})) continue;
    if (root == workspace_) {
      // Writable, it would let a cell rewrite the code the next kernel (and
      // the host, for the package) runs; read-only, it is no workspace.
      return unavailable("the workspace " + root +
                         " is also where the worker's runtime lives (its interpreter prefix or "
                         "the openai4s package); choose a workspace outside it");
    }
    auto source = real_path(root);
    if (!source) continue;
    if (Status walked = let_walk_to(identity_, *source); !walked) {
      return unavailable("the worker's runtime " + *source +
                         " could not be opened to the sandbox uid: " + walked.error().message);
    }
    auto fd = open_source(*source);
    if (!fd) {
      // A runtime file's root is a directory; a plain file is bound by path.
      command_.add({Kind::kReadOnlyBind, *source, root, std::nullopt});
    } else {
      command_.add({Kind::kReadOnlyBindFd, "", root, std::nullopt, fd.value()});
    }
    expect_.read_only_paths.push_back(root);
    visible_.push_back(root);
  }
  return {};
}

Status MountPlan::bind_workspace(const HeldPath& held) {
  auto fd = held_source(held);
  if (!fd) return std::move(fd).error();
  command_.add({Kind::kBindFd, "", workspace_, std::nullopt, fd.value()});
  return {};
}

// The host keeps writing through the path as configured: one that passes
// through a symlink a sandbox may own (a cell can repoint it) is refused,
// by the workspace's own rule.
Status MountPlan::refuse_unsafe_host_path(const std::string& hidden) const {
  if (::geteuid() != 0) return {};
  auto trusted = resolve_workspace(absolute_path(hidden), 0);
  if (trusted) return {};
  return unavailable("the dispatcher's data directory " + hidden +
                     " cannot be hidden from the sandbox: " + trusted.error().message);
}

// A mount point cannot be renamed or removed, so the mask pins the hidden
// directory itself; the directories between the workspace and it are pinned
// too (each bound onto itself). Otherwise a cell could move one aside,
// taking the mask with it, and put its own tree (a symlink where the host
// writes artifacts) where the host still looks.
Status MountPlan::pin_between(const std::string& resolved,
                              const std::vector<std::pair<std::string, std::string>>& hidden) {
  if (!path_contains(workspace_, resolved)) return {};
  for (const auto& between : directories_between(workspace_, resolved)) {
    // A pin must not bind a hidden directory back over its own mask.
    bool hides = std::any_of(hidden.begin(), hidden.end(), [&](const auto& other) {
      return other.second != resolved && path_contains(other.second, between);
    });
    if (hides) continue;
    auto pinned = held_fd(between);
    if (!pinned) return unavailable(pinned.error().message);
    command_.add({Kind::kBindFd, "", between, std::nullopt, pinned.value()});
  }
  return {};
}

// The host's store inside a visible tree: an empty read-only directory over
// it, so a cell can neither read the audit log nor rewrite it.
Status MountPlan::mask_hidden(const std::vector<std::string>& hidden, std::uint64_t tmpfs_bytes) {
  std::vector<std::pair<std::string, std::string>> resolved_paths;  // as given, resolved
  for (const auto& path : hidden) {
    // One not there yet has nothing to hide.
    if (auto resolved = real_path(path)) resolved_paths.emplace_back(path, *resolved);
  }
  for (const auto& [path, resolved] : resolved_paths) {
    // (One equal to the workspace was refused before any launcher ran.)
    if (!visible(resolved)) continue;
    if (Status safe = refuse_unsafe_host_path(path); !safe) return safe;
    if (Status pinned = pin_between(resolved, resolved_paths); !pinned) return pinned;
    command_.add({Kind::kMaskDir, "", resolved, tmpfs_bytes});
  }
  return {};
}

Status MountPlan::bind_exchange_dirs(const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs) {
    auto resolved = real_path(dir);
    if (!resolved || !is_directory(*resolved) || !is_normal_absolute_path(*resolved)) {
      return unavailable("the kernel's host exchange directory " + dir + " is not a directory");
    }
    if (Status handed = hand_over_exchange_dir(identity_, *resolved); !handed) {
      return unavailable(
          "the kernel's host exchange directory could not be given to the sandbox uid: " +
          handed.error().message);
    }
    auto fd = open_source(*resolved);
    if (!fd) return unavailable(fd.error().message);
    command_.add({Kind::kBindFd, "", *resolved, std::nullopt, fd.value()});
  }
  return {};
}

void MountPlan::mask_home(const std::optional<std::string>& home, std::uint64_t tmpfs_bytes) {
  if (!home || !is_normal_absolute_path(*home) || *home == "/" || !is_directory(*home) ||
      path_contains(workspace_, *home)) {
    return;
  }
  command_.add({Kind::kTmpfs, "", *home, tmpfs_bytes});
  expect_.masked_home = *home;
  for (const auto& path : visible_) {
    if (auto entry = first_component_under(*home, path)) {
      expect_.home_allowed_entries.push_back(*entry);
    }
  }
}

}  // namespace o4s::sandbox

namespace o4s::sandbox {

namespace {
constexpr const char* kBootIdPath = "/proc/sys/kernel/random/boot_id";
constexpr const char* kVersionPath = "/proc/version";
}  // namespace

Status MountPlan::identity_files(const std::optional<std::string>& home) {
  const std::string shown_home =
      home && is_normal_absolute_path(*home) ? *home : std::string("/nonexistent");
  const std::pair<const char*, std::string> files[] = {
      {"/etc/passwd", passwd_text(identity_.uid, identity_.gid, shown_home)},
      {"/etc/group", group_text(identity_.gid)},
      {"/etc/hosts", hosts_text(kSandboxHostname)}};
  std::vector<std::pair<const char*, std::string>> wanted(std::begin(files), std::end(files));
  // A machine id of its own: the host's identifies the host to every tenant.
  if (::access("/etc/machine-id", F_OK) == 0)
    wanted.emplace_back("/etc/machine-id", machine_id_text());
  // Over the sandbox's own procfs (mounted before these files).
  if (::access(kBootIdPath, F_OK) == 0) wanted.emplace_back(kBootIdPath, boot_id_text());
  if (::access(kVersionPath, F_OK) == 0) wanted.emplace_back(kVersionPath, kernel_version_text());
  for (const auto& [target, text] : wanted) {
    auto fd = sealed_memory_file(target, text);
    if (!fd) return std::move(fd).error();
    command_.add({Kind::kReadOnlyData, "", target, std::nullopt, fd.value().get()});
    sources_.push_back(std::move(fd.value()));
  }
  return {};
}

}  // namespace o4s::sandbox
