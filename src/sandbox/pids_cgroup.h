// A per-kernel pids cgroup: the fork-bomb bound that still works where
// RLIMIT_NPROC does not (a daemon running as root, see resource_limits.h).
//
// Found through /proc/self/mountinfo and /proc/self/cgroup: the cgroup v1
// pids hierarchy, or cgroup v2 where this process may create a child cgroup
// with the pids controller. A machine without either (an unprivileged user on
// a v1 host) gets an error value that the status reports; the kernel still
// starts, bounded by RLIMIT_NPROC alone.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"

namespace o4s::sandbox {

class PidsCgroup {
 public:
  static Result<std::unique_ptr<PidsCgroup>> create(std::uint64_t max_tasks);
  PidsCgroup(const PidsCgroup&) = delete;
  PidsCgroup& operator=(const PidsCgroup&) = delete;
  // Removes the cgroup once empty (bounded retries; the tasks are dead by the
  // time a kernel's sandbox is destroyed, but their exit may still be landing).
  ~PidsCgroup();

  // Moves a process (all its threads) in; its later children are born inside.
  Status attach(pid_t pid) const;
  const std::string& path() const { return path_; }
  const std::string& kind() const { return kind_; }  // "cgroup v1" or "cgroup v2"

 private:
  PidsCgroup(std::string path, std::string kind) : path_(std::move(path)), kind_(std::move(kind)) {}

  std::string path_;
  std::string kind_;
};

// Pure parsing, exposed for tests: the directory under which this process
// may create pids cgroups, from the text of /proc/self/mountinfo and
// /proc/self/cgroup. Second member: "cgroup v1" / "cgroup v2".
Result<std::pair<std::string, std::string>> locate_pids_hierarchy(const std::string& mountinfo,
                                                                  const std::string& cgroup);

}  // namespace o4s::sandbox
