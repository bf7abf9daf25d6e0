#include "sandbox/pids_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "base/unique_fd.h"

namespace o4s::sandbox {

namespace {

constexpr char kPrefix[] = "openai4s-";

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t stop = text.find(separator, start);
    if (stop == std::string::npos) stop = text.size();
    parts.push_back(text.substr(start, stop - start));
    start = stop + 1;
  }
  return parts;
}

bool contains_word(const std::string& list, const std::string& word) {
  for (const auto& item : split(list, ',')) {
    if (item == word) return true;
  }
  return false;
}

Result<std::string> read_text(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return system_error("open " + path, errno);
  std::string out;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("read " + path, errno);
    }
    if (n == 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

Status write_text(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return system_error("open " + path, errno);
  ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n < 0) return system_error("write " + path, errno);
  if (static_cast<std::size_t>(n) != text.size()) {
    return make_error(ErrorCode::kSystem, "short write to " + path);
  }
  return {};
}

// The hierarchy path of `cgroup_path` below a mount whose root is `root`.
std::optional<std::string> under_mount(const std::string& mountpoint, const std::string& root,
                                       const std::string& cgroup_path) {
  if (root == "/") return cgroup_path == "/" ? mountpoint : mountpoint + cgroup_path;
  if (cgroup_path.compare(0, root.size(), root) != 0) return std::nullopt;
  std::string rest = cgroup_path.substr(root.size());
  if (!rest.empty() && rest.front() != '/') return std::nullopt;
  return mountpoint + rest;
}

// Directories left by daemons that died without cleaning up (a SIGKILLed
// host): empty by now, since their sandboxes died with them.
void sweep_stale(const std::string& base) {
  DIR* dir = ::opendir(base.c_str());
  if (dir == nullptr) return;
  std::string own = std::string(kPrefix) + std::to_string(::getpid()) + "-";
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name.compare(0, sizeof kPrefix - 1, kPrefix) != 0 ||
        name.compare(0, own.size(), own) == 0) {
      continue;
    }
    std::string pid_text = name.substr(sizeof kPrefix - 1);
    pid_text = pid_text.substr(0, pid_text.find('-'));
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    pid_t owner = static_cast<pid_t>(std::stol(pid_text));
    if (::kill(owner, 0) != 0 && errno == ESRCH) ::rmdir((base + "/" + name).c_str());
  }
  ::closedir(dir);
}

}  // namespace

Result<std::pair<std::string, std::string>> locate_pids_hierarchy(const std::string& mountinfo,
                                                                  const std::string& cgroup) {
  std::optional<std::string> v1_path;  // our cgroup in the v1 pids hierarchy
  std::optional<std::string> v2_path;  // our cgroup in the unified hierarchy
  for (const auto& line : split(cgroup, '\n')) {
    auto fields = split(line, ':');
    if (fields.size() < 3) continue;
    // The path may itself contain ':'; take everything after the second one.
    std::string path = line.substr(fields[0].size() + fields[1].size() + 2);
    if (fields[0] == "0" && fields[1].empty()) {
      v2_path = path;
    } else if (contains_word(fields[1], "pids")) {
      v1_path = path;
    }
  }
  // A v1 pids hierarchy owns the controller; v2 can only have it otherwise.
  const bool want_v1 = v1_path.has_value();
  if (!want_v1 && !v2_path) {
    return make_error(ErrorCode::kUnsupported, "this process is in no pids cgroup");
  }
  for (const auto& line : split(mountinfo, '\n')) {
    std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    auto before = split(line.substr(0, dash), ' ');
    auto after = split(line.substr(dash + 3), ' ');
    if (before.size() < 5 || after.size() < 3) continue;
    const std::string& root = before[3];
    const std::string& mountpoint = before[4];
    bool match =
        want_v1 ? after[0] == "cgroup" && contains_word(after[2], "pids") : after[0] == "cgroup2";
    if (!match) continue;
    if (auto dir = under_mount(mountpoint, root, want_v1 ? *v1_path : *v2_path)) {
      return std::make_pair(*dir, std::string(want_v1 ? "cgroup v1" : "cgroup v2"));
    }
  }
  return make_error(ErrorCode::kUnsupported,
                    "no pids cgroup hierarchy is mounted for this process");
}

Result<std::unique_ptr<PidsCgroup>> PidsCgroup::create(std::uint64_t max_tasks) {
  auto mountinfo = read_text("/proc/self/mountinfo");
  if (!mountinfo) return std::move(mountinfo).error();
  auto cgroup = read_text("/proc/self/cgroup");
  if (!cgroup) return std::move(cgroup).error();
  auto located = locate_pids_hierarchy(*mountinfo, *cgroup);
  if (!located) return std::move(located).error();
  auto [base, kind] = std::move(located.value());

  if (kind == "cgroup v2") {
    // The pids controller must be delegated to our children; try to enable
    // it (fails where we may not, which is then reported, not fatal).
    auto controllers = read_text(base + "/cgroup.subtree_control");
    if (!controllers) return std::move(controllers).error();
    if (controllers->find("pids") == std::string::npos) {
      if (Status enabled = write_text(base + "/cgroup.subtree_control", "+pids"); !enabled) {
        return std::move(enabled).error();
      }
    }
  }

  static std::once_flag swept;
  std::call_once(swept, [&] { sweep_stale(base); });

  static std::atomic<unsigned> sequence{0};
  std::string path = base + "/" + kPrefix + std::to_string(::getpid()) + "-" +
                     std::to_string(sequence.fetch_add(1));
  if (::mkdir(path.c_str(), 0755) != 0) return system_error("mkdir " + path, errno);
  std::unique_ptr<PidsCgroup> created(new PidsCgroup(path, kind));
  if (Status limited = write_text(path + "/pids.max", std::to_string(max_tasks)); !limited) {
    return std::move(limited).error();  // the destructor removes the directory
  }
  return created;
}

PidsCgroup::~PidsCgroup() {
  using namespace std::chrono_literals;
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) return;
    std::this_thread::sleep_for(10ms);
  }
}

Status PidsCgroup::attach(pid_t pid) const {
  return write_text(path_ + "/cgroup.procs", std::to_string(pid) + "\n");
}

}  // namespace o4s::sandbox
