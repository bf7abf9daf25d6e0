#include "sandbox/bwrap_command.h"

#include <algorithm>

namespace o4s::sandbox {

namespace {

const char* unshare_flag(Namespace ns) {
  switch (ns) {
    case Namespace::kUser:
      return "--unshare-user";
    case Namespace::kPid:
      return "--unshare-pid";
    case Namespace::kIpc:
      return "--unshare-ipc";
    case Namespace::kUts:
      return "--unshare-uts";
    case Namespace::kNet:
      return "--unshare-net";
  }
  return "";
}

Error invalid(std::string message) {
  return make_error(ErrorCode::kInvalidArgument, "bubblewrap command: " + std::move(message));
}

bool needs_source_path(FsOperation::Kind kind) {
  return kind == FsOperation::Kind::kBind || kind == FsOperation::Kind::kReadOnlyBind;
}

void emit(const FsOperation& op, std::vector<std::string>& argv) {
  using Kind = FsOperation::Kind;
  auto size = [&] {
    if (op.size_bytes) {
      argv.emplace_back("--size");
      argv.push_back(std::to_string(*op.size_bytes));
    }
  };
  switch (op.kind) {
    case Kind::kSymlink:
      argv.insert(argv.end(), {"--symlink", op.source, op.target});
      break;
    case Kind::kDev:
      argv.insert(argv.end(), {"--dev", op.target});
      break;
    case Kind::kProc:
      argv.insert(argv.end(), {"--proc", op.target});
      break;
    case Kind::kTmpfs:
      size();
      argv.insert(argv.end(), {"--tmpfs", op.target});
      break;
    case Kind::kBind:
      argv.insert(argv.end(), {"--bind", op.source, op.target});
      break;
    case Kind::kReadOnlyBind:
      argv.insert(argv.end(), {"--ro-bind", op.source, op.target});
      break;
    case Kind::kMaskFile:
      argv.insert(argv.end(), {"--ro-bind", "/dev/null", op.target});
      break;
    case Kind::kMaskDir:
      size();
      argv.insert(argv.end(), {"--tmpfs", op.target, "--remount-ro", op.target});
      break;
    case Kind::kBindFd:
      argv.insert(argv.end(), {"--bind-fd", std::to_string(op.source_fd), op.target});
      break;
    case Kind::kReadOnlyBindFd:
      argv.insert(argv.end(), {"--ro-bind-fd", std::to_string(op.source_fd), op.target});
      break;
    case Kind::kReadOnlyData:
      argv.insert(argv.end(),
                  {"--perms", "0444", "--ro-bind-data", std::to_string(op.source_fd), op.target});
      break;
  }
}

}  // namespace

bool is_normal_absolute_path(const std::string& path) {
  if (path.empty() || path.front() != '/') return false;
  if (path.find('\0') != std::string::npos) return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t stop = path.find('/', start);
    if (stop == std::string::npos) stop = path.size();
    std::string_view part(path.data() + start, stop - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = stop + 1;
  }
  return true;
}

std::size_t path_depth(const std::string& path) {
  if (path == "/") return 0;
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

BwrapCommand& BwrapCommand::unshare(Namespace ns) {
  if (std::find(namespaces_.begin(), namespaces_.end(), ns) == namespaces_.end()) {
    namespaces_.push_back(ns);
  }
  return *this;
}

BwrapCommand& BwrapCommand::die_with_parent() {
  die_with_parent_ = true;
  return *this;
}

BwrapCommand& BwrapCommand::drop_all_capabilities() {
  drop_capabilities_ = true;
  return *this;
}

BwrapCommand& BwrapCommand::disable_nested_user_namespaces() {
  disable_userns_ = true;
  return *this;
}

BwrapCommand& BwrapCommand::hostname(std::string name) {
  hostname_ = std::move(name);
  return *this;
}

BwrapCommand& BwrapCommand::info_fd(int fd) {
  info_fd_ = fd;
  return *this;
}

BwrapCommand& BwrapCommand::seccomp_fd(int fd) {
  seccomp_fd_ = fd;
  return *this;
}

BwrapCommand& BwrapCommand::add(FsOperation operation) {
  operations_.push_back(std::move(operation));
  return *this;
}

BwrapCommand& BwrapCommand::remount_read_only(std::string path) {
  read_only_remounts_.push_back(std::move(path));
  return *this;
}

BwrapCommand& BwrapCommand::chdir(std::string directory) {
  chdir_ = std::move(directory);
  return *this;
}

Result<std::vector<std::string>> BwrapCommand::build(
    const std::vector<std::string>& command) const {
  if (program_.empty()) return invalid("no bubblewrap program");
  if (command.empty() || command.front().empty()) return invalid("empty command");
  if (info_fd_ && *info_fd_ < 0) return invalid("negative --info-fd");
  if (seccomp_fd_ && *seccomp_fd_ < 0) return invalid("negative --seccomp fd");
  for (const auto& op : operations_) {
    if (!is_normal_absolute_path(op.target) || op.target == "/") {
      return invalid("target is not a normal absolute path below /: '" + op.target + "'");
    }
    if (needs_source_path(op.kind) && !is_normal_absolute_path(op.source)) {
      return invalid("source is not a normal absolute path: '" + op.source + "'");
    }
    const bool by_fd = op.kind == FsOperation::Kind::kBindFd ||
                       op.kind == FsOperation::Kind::kReadOnlyBindFd ||
                       op.kind == FsOperation::Kind::kReadOnlyData;
    if (by_fd && op.source_fd < 0) {
      return invalid("negative source descriptor for '" + op.target + "'");
    }
    if (op.kind == FsOperation::Kind::kSymlink && op.source.empty()) {
      return invalid("empty symlink text for '" + op.target + "'");
    }
  }
  for (const auto& path : read_only_remounts_) {
    if (!is_normal_absolute_path(path)) {
      return invalid("--remount-ro is not a normal absolute path: '" + path + "'");
    }
  }
  if (hostname_) {
    if (std::find(namespaces_.begin(), namespaces_.end(), Namespace::kUts) == namespaces_.end()) {
      return invalid("--hostname needs a UTS namespace of its own");
    }
    const bool valid_name =
        !hostname_->empty() && hostname_->size() <= 64 &&
        hostname_->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
    if (!valid_name) return invalid("not a host name: '" + *hostname_ + "'");
  }
  if (chdir_ && !is_normal_absolute_path(*chdir_)) {
    return invalid("--chdir is not a normal absolute path: '" + *chdir_ + "'");
  }

  std::vector<std::string> argv{program_};
  // --new-session is deliberately absent (spec §2.3): the worker must stay in
  // the session and process group the spawn created, or the group kill that
  // ends a cell's children would miss them. TIOCSTI, the reason bwrap offers
  // --new-session, is denied by the seccomp policy instead.
  if (die_with_parent_) argv.emplace_back("--die-with-parent");
  for (Namespace ns : namespaces_) argv.emplace_back(unshare_flag(ns));
  if (disable_userns_) argv.emplace_back("--disable-userns");
  if (hostname_) argv.insert(argv.end(), {"--hostname", *hostname_});
  if (drop_capabilities_) argv.insert(argv.end(), {"--cap-drop", "ALL"});
  if (info_fd_) argv.insert(argv.end(), {"--info-fd", std::to_string(*info_fd_)});
  if (seccomp_fd_) argv.insert(argv.end(), {"--seccomp", std::to_string(*seccomp_fd_)});

  std::vector<FsOperation> ordered = operations_;
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    std::size_t da = path_depth(a.target);
    std::size_t db = path_depth(b.target);
    if (da != db) return da < db;
    // Two different paths of one depth cannot contain each other, so their
    // relative order is free; ordering them by name keeps this a strict weak
    // order.
    if (a.target != b.target) return a.target < b.target;
    return a.kind < b.kind;
  });
  for (const auto& op : ordered) emit(op, argv);
  // Deepest first, so "/" is last: every mount point has been made by then.
  std::vector<std::string> remounts = read_only_remounts_;
  std::stable_sort(remounts.begin(), remounts.end(),
                   [](const auto& a, const auto& b) { return path_depth(a) > path_depth(b); });
  for (const auto& path : remounts) argv.insert(argv.end(), {"--remount-ro", path});

  if (chdir_) argv.insert(argv.end(), {"--chdir", *chdir_});
  argv.emplace_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace o4s::sandbox
