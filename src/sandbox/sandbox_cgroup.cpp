#include "sandbox/sandbox_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <set>
#include <sstream>

#include "base/file_io.h"
#include "base/unique_fd.h"
#include "sandbox/resource_limits.h"

namespace o4s::sandbox {

namespace {

using namespace std::chrono_literals;

constexpr char kPrefix[] = "openai4s-";
// How often the CPU watchdog reads the usage: a budget overrun is bounded by
// this times the number of CPUs.
constexpr auto kCpuPoll = 100ms;
// How long a kill of the whole envelope may take to be over (SIGKILLed
// processes still have to release their memory).
constexpr auto kKillSettle = 2s;

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

bool contains_word(const std::string& list, const std::string& word, char separator = ',') {
  for (const auto& item : split(list, separator)) {
    if (item == word) return true;
  }
  return false;
}

// O_CREAT is harmless on cgroupfs (the files exist) and lets the tests run
// against a plain directory standing in for one.
Status write_text(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) return system_error("open " + path, errno);
  ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n < 0) return system_error("write " + path, errno);
  if (static_cast<std::size_t>(n) != text.size()) {
    return make_error(ErrorCode::kSystem, "short write to " + path);
  }
  return {};
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

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

// "key value" lines (memory.events, pids.events, cpu.stat, the v1
// memory.oom_control); an empty key reads a file holding one number.
std::optional<std::uint64_t> number_in(const std::string& text, const std::string& key) {
  std::uint64_t value = 0;
  if (key.empty()) {
    if (std::istringstream(text) >> value) return value;
    return std::nullopt;
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    if (words >> name >> value && name == key) return value;
  }
  return std::nullopt;
}

std::string version_name(int version) { return version == 2 ? "cgroup v2" : "cgroup v1"; }

}  // namespace

Result<CgroupBase> locate_controller(const std::string& mountinfo, const std::string& cgroup,
                                     const std::string& controller) {
  std::optional<std::string> v1_path;  // our cgroup in the controller's v1 hierarchy
  std::optional<std::string> v2_path;  // our cgroup in the unified hierarchy
  for (const auto& line : split(cgroup, '\n')) {
    auto fields = split(line, ':');
    if (fields.size() < 3) continue;
    // The path may itself contain ':'; take everything after the second one.
    std::string path = line.substr(fields[0].size() + fields[1].size() + 2);
    if (fields[0] == "0" && fields[1].empty()) {
      v2_path = path;
    } else if (contains_word(fields[1], controller)) {
      v1_path = path;
    }
  }
  // A v1 hierarchy owns the controller; v2 can only have it otherwise.
  const bool want_v1 = v1_path.has_value();
  if (!want_v1 && !v2_path) {
    return make_error(ErrorCode::kUnsupported, "this process is in no " + controller + " cgroup");
  }
  for (const auto& line : split(mountinfo, '\n')) {
    std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    auto before = split(line.substr(0, dash), ' ');
    auto after = split(line.substr(dash + 3), ' ');
    if (before.size() < 5 || after.size() < 3) continue;
    const std::string& root = before[3];
    const std::string& mountpoint = before[4];
    bool match = want_v1 ? after[0] == "cgroup" && contains_word(after[2], controller)
                         : after[0] == "cgroup2";
    if (!match) continue;
    if (auto dir = under_mount(mountpoint, root, want_v1 ? *v1_path : *v2_path)) {
      return CgroupBase{*dir, want_v1 ? 1 : 2};
    }
  }
  return make_error(ErrorCode::kUnsupported,
                    "no " + controller + " cgroup hierarchy is mounted for this process");
}

std::map<std::string, CgroupBase> SandboxCgroup::bases_for_this_process(
    std::map<std::string, std::string>& errors) {
  std::map<std::string, CgroupBase> bases;
  auto mountinfo = read_file("/proc/self/mountinfo");
  auto cgroup = read_file("/proc/self/cgroup");
  for (const char* controller : {"memory", "pids", "cpuacct"}) {
    if (!mountinfo || !cgroup) {
      errors[controller] = "/proc/self/mountinfo or /proc/self/cgroup is unreadable";
      continue;
    }
    auto located = locate_controller(*mountinfo, *cgroup, controller);
    if (located) {
      bases[controller] = located.value();
    } else {
      errors[controller] = located.error().message;
    }
  }
  return bases;
}

std::string SandboxCgroup::next_name() {
  static std::atomic<unsigned> sequence{0};
  return kPrefix + std::to_string(::getpid()) + "-" + std::to_string(sequence.fetch_add(1));
}

SandboxCgroup::SandboxCgroup(EnvelopeLimits limits, std::map<std::string, std::string> directories,
                             std::map<std::string, int> versions)
    : limits_(std::move(limits)),
      directories_(std::move(directories)),
      versions_(std::move(versions)) {}

Result<std::unique_ptr<SandboxCgroup>> SandboxCgroup::create(
    const EnvelopeLimits& limits, const std::map<std::string, CgroupBase>& bases,
    const std::string& name) {
  // Only the controllers a limit needs: an unlimited resource keeps the
  // sandbox out of that hierarchy.
  std::map<std::string, bool> wanted = {{"memory", limits.memory_bytes.has_value()},
                                        {"pids", limits.processes.has_value()},
                                        {"cpuacct", limits.cpu_seconds.has_value()}};
  std::map<std::string, std::string> directories;
  std::map<std::string, int> versions;
  for (const auto& [controller, base] : bases) {
    if (!wanted[controller]) continue;
    if (base.version == 2 && controller != "cpuacct") {
      // The controller must be delegated to our children; enabling it fails
      // where we may not, which leaves the rlimit fallback.
      auto available = read_file(base.directory + "/cgroup.controllers");
      if (!available || !contains_word(split(*available, '\n')[0], controller, ' ')) continue;
      auto enabled = read_file(base.directory + "/cgroup.subtree_control");
      if (!enabled) continue;
      if (!contains_word(split(*enabled, '\n')[0], controller, ' ') &&
          !write_text(base.directory + "/cgroup.subtree_control", "+" + controller)) {
        continue;
      }
    }
    directories[controller] = base.directory + "/" + name;
    versions[controller] = base.version;
  }
  if (directories.empty()) {
    return make_error(ErrorCode::kUnsupported, "no cgroup controller is available to this process");
  }
  std::unique_ptr<SandboxCgroup> made(
      new SandboxCgroup(limits, std::move(directories), std::move(versions)));
  std::set<std::string> created;
  for (const auto& [controller, dir] : made->directories_) {
    if (created.count(dir) != 0) continue;
    std::string base = dir.substr(0, dir.rfind('/'));
    sweep_stale(base);
    if (::mkdir(dir.c_str(), 0755) != 0) return system_error("mkdir " + dir, errno);
    created.insert(dir);
  }
  // Limits; a failure leaves the destructor to remove the directories.
  auto& m = made->mechanisms_;
  if (auto it = made->directories_.find("memory"); it != made->directories_.end()) {
    std::string bytes = std::to_string(*limits.memory_bytes);
    const std::string& dir = it->second;
    if (made->versions_["memory"] == 2) {
      if (Status s = write_text(dir + "/memory.max", bytes); !s) return std::move(s).error();
      // Swap would let a sandbox hold more than its limit.
      if (exists(dir + "/memory.swap.max")) (void)write_text(dir + "/memory.swap.max", "0");
    } else {
      if (Status s = write_text(dir + "/memory.limit_in_bytes", bytes); !s) {
        return std::move(s).error();
      }
      if (exists(dir + "/memory.memsw.limit_in_bytes")) {
        (void)write_text(dir + "/memory.memsw.limit_in_bytes", bytes);
      }
    }
    const char* events = made->versions_["memory"] == 2 ? "memory.events" : "memory.oom_control";
    made->oom_counter_ = UniqueFd(::open((dir + "/" + events).c_str(), O_RDONLY | O_CLOEXEC));
    m.memory = "a memory cgroup (" + version_name(made->versions_["memory"]) +
               ") over the whole sandbox, tmpfs included";
  }
  if (auto it = made->directories_.find("pids"); it != made->directories_.end()) {
    if (Status s = write_text(it->second + "/pids.max", std::to_string(*limits.processes)); !s) {
      return std::move(s).error();
    }
    m.processes =
        "a pids cgroup (" + version_name(made->versions_["pids"]) + ") over the whole sandbox";
  }
  if (made->directories_.count("cpuacct") != 0) {
    m.cpu = "a CPU-time watchdog on the sandbox's cgroup (" +
            version_name(made->versions_["cpuacct"]) + ") that kills the whole sandbox";
    made->watchdog_ = std::thread([raw = made.get()] { raw->watch_cpu(); });
  }
  made->begin_generation();
  return made;
}

SandboxCgroup::~SandboxCgroup() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  std::set<std::string> unique;
  for (const auto& [controller, dir] : directories_) unique.insert(dir);
  for (const auto& dir : unique) {
    // Bounded: the tasks are dead by the time a kernel's sandbox goes, but
    // their exit may still be landing.
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (::rmdir(dir.c_str()) == 0 || errno == ENOENT || errno != EBUSY) break;
      std::this_thread::sleep_for(10ms);
    }
  }
}

Status SandboxCgroup::attach(pid_t pid) const {
  std::set<std::string> done;
  for (const auto& [controller, dir] : directories_) {
    if (!done.insert(dir).second) continue;
    if (Status s = write_text(dir + "/cgroup.procs", std::to_string(pid) + "\n"); !s) return s;
  }
  return {};
}

std::optional<std::uint64_t> SandboxCgroup::counter(const std::string& controller,
                                                    const std::string& file,
                                                    const std::string& key) const {
  auto it = directories_.find(controller);
  if (it == directories_.end()) return std::nullopt;
  auto text = read_file(it->second + "/" + file);
  if (!text) return std::nullopt;
  return number_in(*text, key);
}

std::optional<std::uint64_t> SandboxCgroup::cpu_usage_ns() const {
  auto it = versions_.find("cpuacct");
  if (it == versions_.end()) return std::nullopt;
  if (it->second == 2) {
    auto usec = counter("cpuacct", "cpu.stat", "usage_usec");
    if (!usec) return std::nullopt;
    return *usec * 1000;
  }
  return counter("cpuacct", "cpuacct.usage", "");
}

std::optional<std::uint64_t> SandboxCgroup::oom_kills() const {
  auto it = versions_.find("memory");
  if (it == versions_.end()) return std::nullopt;
  if (!oom_counter_) {
    // Not opened when the cgroup was made (an old v1 kernel): by path.
    return counter("memory", it->second == 2 ? "memory.events" : "memory.oom_control", "oom_kill");
  }
  // Both files are a few short "key value" lines.
  char buffer[1024];
  ssize_t n = ::pread(oom_counter_.get(), buffer, sizeof buffer - 1, 0);
  if (n <= 0) return std::nullopt;
  return number_in(std::string(buffer, static_cast<std::size_t>(n)), "oom_kill");
}

std::optional<std::uint64_t> SandboxCgroup::pids_refusals() const {
  return counter("pids", "pids.events", "max");
}

void SandboxCgroup::begin_generation() {
  std::lock_guard lock(mutex_);
  cpu_baseline_ns_ = cpu_usage_ns().value_or(0);
  oom_baseline_ = oom_kills().value_or(0);
  pids_baseline_ = pids_refusals().value_or(0);
  cpu_spent_ = false;
  cpu_kill_done_ = false;
}

std::optional<std::string> SandboxCgroup::limit_hit() const {
  std::unique_lock lock(mutex_);
  if (cpu_spent_) {
    // The watchdog may still be killing: the worker's death is seen first,
    // and the caller is told the sandbox stopped only once all of it has.
    wake_.wait_for(lock, kKillSettle, [this] { return cpu_kill_done_; });
    return "the sandbox's CPU limit (" + std::to_string(*limits_.cpu_seconds) +
           " s of CPU time for all its processes together) was spent, so the sandbox was "
           "stopped";
  }
  if (auto kills = oom_kills(); kills && *kills > oom_baseline_) {
    return "the sandbox's memory limit (" + describe_bytes(limits_.memory_bytes) +
           " for all its processes and tmpfs files together) was reached: the kernel's OOM "
           "killer ended " +
           std::to_string(*kills - oom_baseline_) + " process(es)";
  }
  if (auto refused = pids_refusals(); refused && *refused > pids_baseline_) {
    return "the sandbox's process limit (" + std::to_string(*limits_.processes) +
           " tasks) refused " + std::to_string(*refused - pids_baseline_) + " fork(s)";
  }
  return std::nullopt;
}

void SandboxCgroup::kill_all() const {
  std::set<std::string> unique;
  for (const auto& [controller, dir] : directories_) unique.insert(dir);
  // Over once every list is empty: a process leaves cgroup.procs only past
  // releasing its memory, so nothing of the sandbox runs any more.
  const auto deadline = std::chrono::steady_clock::now() + kKillSettle;
  for (const auto& dir : unique) {
    // cgroup v2 kills the whole cgroup atomically, forks in flight included
    // (it only sends the signals: the wait below is still needed).
    const bool killed_at_once =
        exists(dir + "/cgroup.kill") && write_text(dir + "/cgroup.kill", "1");
    for (;;) {
      auto listed = read_file(dir + "/cgroup.procs");
      if (!listed || listed->find_first_of("0123456789") == std::string::npos) break;
      if (std::chrono::steady_clock::now() >= deadline) return;
      // v1: kill what is listed until nothing is. Between the read and the
      // kill a listed process could exit and its pid be reused; the window
      // is microseconds and the pids are the sandbox's own, which cannot
      // exit on their own while SIGKILLed siblings are reaped by its init.
      if (!killed_at_once) {
        for (const auto& line : split(*listed, '\n')) {
          // A process outside the reader's PID namespace reads as 0 (v2):
          // kill(0) would hit the host's own process group.
          const long pid = line.empty() ? 0 : std::stol(line);
          if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
        }
      }
      std::this_thread::sleep_for(killed_at_once ? 2ms : 5ms);
    }
  }
}

void SandboxCgroup::watch_cpu() {
  const std::uint64_t budget_ns = *limits_.cpu_seconds * 1000000000ULL;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kCpuPoll, [this] { return stopping_; });
    if (stopping_ || cpu_spent_) continue;
    lock.unlock();
    auto used = cpu_usage_ns();
    lock.lock();
    if (!used || *used < cpu_baseline_ns_ || *used - cpu_baseline_ns_ < budget_ns) continue;
    cpu_spent_ = true;
    lock.unlock();
    kill_all();
    lock.lock();
    cpu_kill_done_ = true;
    wake_.notify_all();
  }
}

}  // namespace o4s::sandbox
