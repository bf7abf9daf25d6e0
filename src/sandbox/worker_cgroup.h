// A cgroup holding one unsandboxed worker and everything it starts, for the
// direct launcher: no limits, only a way to find and end every process of
// the worker however it left its session and tree (a setsid'd daemon with a
// scrubbed environment, whose worker died first). Only where this process
// may create a cgroup (a root host; a delegated cgroup v2): elsewhere the
// subreaper and the mark (proc/descendants.h) are all there is.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/result.h"

namespace o4s::sandbox {

class WorkerCgroup {
 public:
  // Makes the cgroup beside this process's own, in the pids hierarchy (v1)
  // or the unified one (v2), named as the sandbox's envelopes are. First
  // empties and removes those a host that has died left there: what its
  // workers started when it died without shutting them down.
  static Result<std::unique_ptr<WorkerCgroup>> create();
  WorkerCgroup(const WorkerCgroup&) = delete;
  WorkerCgroup& operator=(const WorkerCgroup&) = delete;
  // Kills what is left and removes the directory.
  ~WorkerCgroup();

  // Moves a process in; its later children are born inside.
  Status attach(pid_t pid) const;
  // SIGKILLs every process inside (cgroup.kill where v2 has it, else each
  // one listed, again until none is).
  void kill_all() const;
  const std::string& directory() const { return directory_; }

 private:
  static void sweep_dead_hosts(const std::string& base, int version);
  WorkerCgroup(std::string directory, int version, bool kill_at_once)
      : directory_(std::move(directory)), version_(version), kill_at_once_(kill_at_once) {}
  std::string directory_;
  int version_;
  bool kill_at_once_;  // cgroup.kill where v2 has it
};

}  // namespace o4s::sandbox
