#include "sandbox/self_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "base/file_io.h"
#include "sandbox/resource_limits.h"

namespace o4s::sandbox {

namespace {

std::optional<std::string> link_of(const std::string& path) {
  char target[256];
  ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  if (n <= 0) return std::nullopt;
  return std::string(target, static_cast<std::size_t>(n));
}

std::optional<std::string> status_field(const std::string& status, const std::string& name) {
  std::size_t at = status.find("\n" + name + ":");
  if (at == std::string::npos) return std::nullopt;
  at += name.size() + 2;
  std::size_t end = status.find('\n', at);
  std::string value = status.substr(at, end - at);
  value.erase(0, value.find_first_not_of(" \t"));
  return value;
}

// Field 22 of /proc/<pid>/stat (starttime), counted after the ')' that ends
// the command name, which may itself contain spaces and parentheses.
std::optional<std::string> start_time(const std::string& stat_path) {
  auto stat = read_file(stat_path);
  if (!stat) return std::nullopt;
  std::size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::size_t at = close + 2;  // state is field 3
  for (int field = 3; field < 22; ++field) {
    at = stat->find(' ', at);
    if (at == std::string::npos) return std::nullopt;
    ++at;
  }
  return stat->substr(at, stat->find(' ', at) - at);
}

class Checker {
 public:
  Checker(const PinnedWorker& worker, SelfTestReport& report)
      : worker_(worker), proc_("/proc/" + std::to_string(worker.worker_pid)), report_(report) {}

  std::string inside(const std::string& path) const { return proc_ + "/root" + path; }

  void add(std::string name, bool passed, std::string detail) {
    report_.checks.push_back({std::move(name), passed, std::move(detail)});
  }

  void namespaces(bool network_isolated) {
    std::vector<std::string> kinds = {"user", "pid", "mnt", "ipc", "uts"};
    if (network_isolated) kinds.emplace_back("net");
    std::string shared;
    for (const auto& kind : kinds) {
      auto mine = link_of("/proc/self/ns/" + kind);
      auto theirs = link_of(proc_ + "/ns/" + kind);
      if (!mine || !theirs || *mine == *theirs) shared += (shared.empty() ? "" : ",") + kind;
    }
    add("namespaces", shared.empty(),
        shared.empty() ? "private user, pid, mount, ipc, uts" +
                             std::string(network_isolated ? ", net" : "") + " namespaces"
                       : "shares the host's " + shared + " namespace");
  }

  void host_pid_one_invisible() {
    // Inside, PID 1 must be bubblewrap's init. If the host's PID namespace
    // leaked in, the sandbox's /proc/1 would be the host's init instead.
    auto inner = start_time(inside("/proc/1/stat"));
    auto init = start_time("/proc/" + std::to_string(worker_.init_pid) + "/stat");
    auto host = start_time("/proc/1/stat");
    bool passed = inner && init && *inner == *init && (!host || *host != *inner);
    add("host_pid_1_invisible", passed,
        passed ? "the sandbox's PID 1 is its own init" : "the sandbox can see the host's PID 1");
  }

  void home_invisible(const std::string& home, const std::vector<std::string>& allowed) {
    std::string path = inside(home);
    struct statfs fs {};
    bool tmpfs = ::statfs(path.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
    std::string leaked;
    if (DIR* dir = ::opendir(path.c_str())) {
      while (dirent* entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name == "." || name == ".." ||
            std::find(allowed.begin(), allowed.end(), name) != allowed.end()) {
          continue;
        }
        leaked = name;
        break;
      }
      ::closedir(dir);
    }
    bool passed = tmpfs && leaked.empty();
    add("host_home_invisible", passed,
        passed ? home + " is a private empty tmpfs"
               : (tmpfs ? home + " shows '" + leaked + "'" : home + " is not a private tmpfs"));
  }

  void writes_refused(const std::vector<std::string>& paths) {
    std::string writable;
    std::string how;
    for (const auto& path : paths) {
      if (::access(inside(path).c_str(), W_OK) == 0) {
        writable = path;
        break;
      }
      if (how.empty()) how = errno == EROFS ? "read-only mounts" : std::strerror(errno);
    }
    add("outside_write_blocked", writable.empty(),
        writable.empty() ? "writes outside the workspace are refused (" + how + ")"
                         : writable + " is writable from the sandbox");
  }

  void writable(const std::string& name, const std::string& path, bool want_tmpfs) {
    bool ok = ::access(inside(path).c_str(), W_OK) == 0;
    struct statfs fs {};
    if (ok && want_tmpfs) {
      ok = ::statfs(inside(path).c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
    }
    add(name, ok, ok ? path + " is writable" : path + " is not writable as expected");
  }

  void network_blocked() {
    auto dev = read_file(proc_ + "/net/dev");
    std::set<std::string> interfaces;
    if (dev) {
      std::size_t start = 0;
      while (start < dev->size()) {
        std::size_t end = dev->find('\n', start);
        if (end == std::string::npos) end = dev->size();
        std::string line = dev->substr(start, end - start);
        std::size_t colon = line.find(':');
        if (colon != std::string::npos && line.find('|') == std::string::npos) {
          std::string name = line.substr(0, colon);
          name.erase(0, name.find_first_not_of(' '));
          interfaces.insert(name);
        }
        start = end + 1;
      }
    }
    bool passed = dev && interfaces == std::set<std::string>{"lo"};
    add("network_blocked", passed,
        passed ? "only a private loopback interface" : "the sandbox has a network interface");
  }

  void seccomp_and_privileges() {
    auto status = read_file(proc_ + "/status");
    bool passed = status && status_field(*status, "Seccomp") == "2" &&
                  status_field(*status, "NoNewPrivs") == "1" &&
                  status_field(*status, "CapEff") == "0000000000000000";
    add("seccomp_and_no_capabilities", passed,
        passed ? "seccomp filter active, no_new_privs set, no capabilities"
               : "seccomp, no_new_privs or capabilities are not as set up");
  }

  // The host's view of the worker's ids: bubblewrap maps the sandbox to
  // whatever uid started it, so this is where "root inside" turns out to be
  // host root or not.
  void host_identity(const SandboxIdentity& identity) {
    auto status = read_file(proc_ + "/status");
    auto uids = status ? status_field(*status, "Uid") : std::nullopt;
    auto gids = status ? status_field(*status, "Gid") : std::nullopt;
    auto ids_of = [](const std::string& text) {
      std::vector<unsigned long> ids;
      std::size_t at = 0;
      while (at < text.size()) {
        std::size_t end = text.find_first_of(" \t", at);
        if (end == std::string::npos) end = text.size();
        if (end > at) ids.push_back(std::stoul(text.substr(at, end - at)));
        at = end + 1;
      }
      return ids;
    };
    bool passed = uids && gids;
    std::string detail;
    if (passed) {
      auto u = ids_of(*uids);
      auto g = ids_of(*gids);
      passed = u.size() == 4 && g.size() == 4;
      for (auto id : u) passed = passed && id != 0;
      for (auto id : g) passed = passed && id != 0;
      if (passed && identity.dropped) passed = u[0] == identity.uid && g[0] == identity.gid;
      detail = passed
                   ? "the worker is host uid " + std::to_string(u.empty() ? 0 : u[0]) + ", gid " +
                         std::to_string(g.empty() ? 0 : g[0]) + " (" + identity.chosen_by + ")"
                   : "the worker runs as host root (" + identity.chosen_by + ")";
    } else {
      detail = "the worker's ids could not be read";
    }
    add(kUidCheck, passed, detail);
  }

  void proc_knobs_read_only() {
    struct statvfs fs {};
    bool passed = ::statvfs(inside("/proc/sys").c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY);
    add(kProcSysCheck, passed,
        passed ? "/proc/sys is a read-only mount" : "/proc/sys is writable from the sandbox");
    // bubblewrap's init shares the worker's uid; its memory is masked.
    struct stat st {};
    bool masked = ::stat(inside("/proc/1/mem").c_str(), &st) == 0 && S_ISCHR(st.st_mode) &&
                  major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
    add("init_memory_masked", masked,
        masked ? "/proc/1/mem is masked" : "the sandbox's PID 1 memory is reachable");
  }

  void limits(const ResourceLimits& limits) {
    auto hold = limits_hold(worker_.worker_pid, limits);
    bool passed = hold && hold.value();
    add("resource_limits", passed,
        passed ? "memory " + describe_bytes(limits.address_space_bytes) + ", file size " +
                     describe_bytes(limits.file_size_bytes)
               : "the worker's resource limits are not in force");
  }

 private:
  const PinnedWorker& worker_;
  std::string proc_;
  SelfTestReport& report_;
};

}  // namespace

bool SelfTestReport::passed() const {
  return !checks.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const auto& check) { return check.passed; });
}

bool SelfTestReport::only_degradable_failures() const {
  return std::all_of(checks.begin(), checks.end(), [](const auto& check) {
    return check.passed || check.name == kUidCheck || check.name == kProcSysCheck;
  });
}

std::string SelfTestReport::failures() const {
  std::string out;
  for (const auto& check : checks) {
    if (check.passed) continue;
    if (!out.empty()) out += "; ";
    out += check.name + ": " + check.detail;
  }
  return out;
}

SelfTestReport run_self_test(const PinnedWorker& worker, const SelfTestExpectations& expect) {
  SelfTestReport report;
  Checker check(worker, report);
  check.namespaces(expect.network_isolated);
  check.host_pid_one_invisible();
  if (expect.masked_home) check.home_invisible(*expect.masked_home, expect.home_allowed_entries);
  check.writes_refused(expect.read_only_paths);
  check.writable("workspace_writable", expect.workspace, false);
  // A workspace that IS the temp directory is bound over the private tmpfs
  // (the workspace must win); then the workspace check above covers it.
  if (expect.workspace != expect.private_tmp) {
    check.writable("private_tmp", expect.private_tmp, true);
  }
  if (expect.network_isolated) check.network_blocked();
  check.seccomp_and_privileges();
  check.host_identity(expect.identity);
  check.proc_knobs_read_only();
  check.limits(expect.limits);
  // Everything above read the worker through its pid; it is the pinned
  // process only if it is still alive now.
  if (pidfd_exited(worker.worker_pidfd.get())) {
    report.checks.push_back({"worker_alive", false, "the worker exited during the self-test"});
  }
  return report;
}

}  // namespace o4s::sandbox
