// One resource envelope per kernel sandbox: a cgroup (one per v1 controller
// hierarchy, or one v2 directory) holding every process of the sandbox --
// bubblewrap's own processes, its PID 1 and the worker -- so memory (tmpfs
// pages included: they are charged to the cgroup of whoever wrote them),
// processes and CPU time count the sandbox as a whole, where the rlimits
// only bound each process on its own.
//
// Found through /proc/self/mountinfo and /proc/self/cgroup: per controller,
// its cgroup v1 hierarchy, or else the unified (v2) hierarchy where this
// process may create a child cgroup. A controller neither offers is left to
// the rlimit fallback, and the status says so.
//
// CPU time has no cgroup limit (cpu.max bounds a rate, not a total), so a
// watchdog thread reads the cgroup's CPU usage and kills the whole sandbox
// once its budget is spent.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::sandbox {

// Where one controller's cgroups for this process are made.
struct CgroupBase {
  std::string directory;  // our own cgroup in that hierarchy
  int version = 1;        // 1 or 2
};

// Pure parsing, exposed for tests: the directory under which this process
// may create cgroups for `controller` ("pids", "memory", "cpuacct"), from the
// text of /proc/self/mountinfo and /proc/self/cgroup. A v1 hierarchy with the
// controller wins; else the unified hierarchy.
Result<CgroupBase> locate_controller(const std::string& mountinfo, const std::string& cgroup,
                                     const std::string& controller);

struct EnvelopeLimits {
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> processes;
  std::optional<std::uint64_t> cpu_seconds;
};

// What enforces each resource, for the status ("" = no cgroup does).
struct EnvelopeMechanisms {
  std::string memory;
  std::string processes;
  std::string cpu;
};

class SandboxCgroup {
 public:
  // `bases` maps "memory" / "pids" / "cpuacct" to where its cgroup goes
  // (missing: not available). `name` is the per-kernel directory name.
  static Result<std::unique_ptr<SandboxCgroup>> create(
      const EnvelopeLimits& limits, const std::map<std::string, CgroupBase>& bases,
      const std::string& name);
  // The bases of this process (mountinfo and /proc/self/cgroup); the
  // errors say why a controller is unavailable.
  static std::map<std::string, CgroupBase> bases_for_this_process(
      std::map<std::string, std::string>& errors);
  // A fresh per-kernel name: openai4s-<daemon pid>-<sequence>.
  static std::string next_name();

  SandboxCgroup(const SandboxCgroup&) = delete;
  SandboxCgroup& operator=(const SandboxCgroup&) = delete;
  // Stops the watchdog, kills what is left and removes the directories.
  ~SandboxCgroup();

  // Moves a process (all its threads) into every controller's cgroup; its
  // later children are born inside.
  Status attach(pid_t pid) const;
  // A new worker generation: the CPU budget and the limit-hit record start
  // again from the current counters.
  void begin_generation();
  // Which limit ended the sandbox since begin_generation(), if one did:
  // "memory limit" / "CPU limit" / "process limit", with the numbers.
  std::optional<std::string> limit_hit() const;
  // SIGKILLs every process in the envelope.
  void kill_all() const;
  std::optional<std::uint64_t> cpu_usage_ns() const;
  // How many processes the kernel's OOM killer has ended in the envelope
  // since it was made (v2 memory.events, v1 memory.oom_control: oom_kill,
  // Linux >= 4.13); nullopt without a memory cgroup. One pread on a
  // descriptor held open, cheap enough to read around every cell.
  std::optional<std::uint64_t> oom_kills() const;

  const EnvelopeMechanisms& mechanisms() const { return mechanisms_; }
  const std::map<std::string, std::string>& directories() const { return directories_; }

 private:
  SandboxCgroup(EnvelopeLimits limits, std::map<std::string, std::string> directories,
                std::map<std::string, int> versions);
  std::optional<std::uint64_t> counter(const std::string& controller, const std::string& file,
                                       const std::string& key) const;
  std::optional<std::uint64_t> pids_refusals() const;
  void watch_cpu();

  EnvelopeLimits limits_;
  std::map<std::string, std::string> directories_;  // controller -> our cgroup
  std::map<std::string, int> versions_;
  EnvelopeMechanisms mechanisms_;
  UniqueFd oom_counter_;  // the file oom_kills() reads

  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;
  bool stopping_ = false;
  std::uint64_t cpu_baseline_ns_ = 0;
  std::uint64_t oom_baseline_ = 0;
  std::uint64_t pids_baseline_ = 0;
  bool cpu_spent_ = false;
  bool cpu_kill_done_ = false;  // the watchdog's kill_all() has returned
  std::thread watchdog_;
};

}  // namespace o4s::sandbox
