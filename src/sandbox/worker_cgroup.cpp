#include "sandbox/worker_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

#include "base/file_io.h"
#include "base/unique_fd.h"
#include "sandbox/sandbox_cgroup.h"

namespace o4s::sandbox {

namespace {

using namespace std::chrono_literals;

// SIGKILLed processes leave cgroup.procs once they have released their
// memory; this bounds the wait for that.
constexpr auto kKillSettle = 2s;

Status write_text(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return system_error("open " + path, errno);
  ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n < 0) return system_error("write " + path, errno);
  return {};
}

// openai4s-<host pid>-w<sequence>: the sandbox envelopes' pattern (so a
// later host removes it if this one died first), told apart by the "w".
std::string next_name() {
  static std::atomic<unsigned> sequence{0};
  return "openai4s-" + std::to_string(::getpid()) + "-w" + std::to_string(sequence.fetch_add(1));
}

// "openai4s-<pid>-w<n>" whose host <pid> is gone: a host that died without
// shutting its kernels down left what its workers started in there.
bool left_by_a_dead_host(const std::string& name) {
  static constexpr std::string_view kPrefix = "openai4s-";
  if (!name.starts_with(kPrefix)) return false;
  std::size_t dash = name.find("-w", kPrefix.size());
  if (dash == std::string::npos || dash == kPrefix.size()) return false;
  std::string owner = name.substr(kPrefix.size(), dash - kPrefix.size());
  if (owner.find_first_not_of("0123456789") != std::string::npos) return false;
  return ::kill(static_cast<pid_t>(std::stol(owner)), 0) != 0 && errno == ESRCH;
}

// The processes a cgroup.procs listing names. A process of another PID
// namespace reads as 0 on cgroup v2, and kill(0) would hit our own group:
// only positive pids count.
std::vector<pid_t> listed_pids(const std::string& path) {
  std::vector<pid_t> pids;
  auto listed = read_file(path);
  if (!listed) return pids;
  const char* at = listed.value().c_str();
  char* end = nullptr;
  for (long pid = std::strtol(at, &end, 10); end != at; pid = std::strtol(at, &end, 10)) {
    if (pid > 0) pids.push_back(static_cast<pid_t>(pid));
    at = end;
  }
  return pids;
}

}  // namespace

Result<std::unique_ptr<WorkerCgroup>> WorkerCgroup::create() {
  auto mountinfo = read_file("/proc/self/mountinfo");
  if (!mountinfo) return std::move(mountinfo).error();
  auto own = read_file("/proc/self/cgroup");
  if (!own) return std::move(own).error();
  // Any hierarchy would do (no controller is used); the pids one, v1 or
  // v2, is where the sandbox's envelopes go too.
  auto base = locate_controller(*mountinfo, *own, "pids");
  if (!base) return std::move(base).error();
  sweep_dead_hosts(base->directory, base->version);
  std::string directory = base->directory + "/" + next_name();
  if (::mkdir(directory.c_str(), 0755) != 0) return system_error("mkdir " + directory, errno);
  return std::unique_ptr<WorkerCgroup>(
      new WorkerCgroup(std::move(directory), base->version, /*kill_at_once=*/true));
}

void WorkerCgroup::sweep_dead_hosts(const std::string& base, int version) {
  std::vector<std::string> stale;
  if (DIR* dir = ::opendir(base.c_str())) {
    while (dirent* entry = ::readdir(dir)) {
      if (left_by_a_dead_host(entry->d_name)) stale.emplace_back(entry->d_name);
    }
    ::closedir(dir);
  }
  // Only the processes this PID namespace sees, one by one: a host in
  // another namespace is not dead because kill(2) cannot find it here, and
  // its processes read as pid 0 (v2) or are not listed (v1). cgroup.kill
  // would reach them too. A removal fails while any is left.
  for (const auto& name : stale) {
    WorkerCgroup left(base + "/" + name, version, /*kill_at_once=*/false);
  }
}

WorkerCgroup::~WorkerCgroup() {
  kill_all();
  ::rmdir(directory_.c_str());
}

Status WorkerCgroup::attach(pid_t pid) const {
  return write_text(directory_ + "/cgroup.procs", std::to_string(pid));
}

void WorkerCgroup::kill_all() const {
  const std::string procs = directory_ + "/cgroup.procs";
  // cgroup v2 (Linux 5.14) kills the whole cgroup at once, forks in flight
  // included; it only sends the signals, so the wait below stays.
  const bool at_once =
      kill_at_once_ && version_ == 2 && write_text(directory_ + "/cgroup.kill", "1").ok();
  const auto deadline = std::chrono::steady_clock::now() + kKillSettle;
  for (auto listed = listed_pids(procs); !listed.empty(); listed = listed_pids(procs)) {
    if (std::chrono::steady_clock::now() >= deadline) return;
    // v1: kill what is listed until nothing is. A listed process that exits
    // and whose pid is reused between the read and the kill is the risk; the
    // pids are this cgroup's own and the window is microseconds.
    if (!at_once) {
      for (pid_t pid : listed) ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(at_once ? 2ms : 5ms);
  }
}

}  // namespace o4s::sandbox
