// A supervised child: its pid, a pidfd pinning it, and its process group.
// The destructor guarantees no orphan group and no zombie (kill, then reap,
// bounded).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::proc {

class ChildProcess {
 public:
  // Takes ownership of an unreaped child that leads its own process group.
  ChildProcess(pid_t pid, UniqueFd pidfd);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Recorded at spawn, never looked up later: after reaping, the lookup
  // fails exactly when the group most needs signalling.
  pid_t pgid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }

  // Popen-style return code: exit status, or -signal; nullopt while running.
  // Reaping first kills what is left of the group (a cell's grandchildren).
  std::optional<int> poll();
  // Waits up to timeout (forever when nullopt) and reaps.
  std::optional<int> wait(std::optional<std::chrono::milliseconds> timeout);
  // Waits for exit without reaping, so the pid and group id stay reserved.
  bool wait_exit(std::chrono::milliseconds timeout) const;
  bool exited() const { return wait_exit(std::chrono::milliseconds(0)); }

  // Signals the leader through its pidfd (cannot hit a recycled pid).
  Status send_signal(int signum);
  // SIGKILL to the whole group, then wait up to `confirm` for the group to
  // empty, reaping the leader as it goes. No TERM grace: this is the last
  // rung and a grace would add seconds to every hard recovery.
  void kill_group(std::chrono::milliseconds confirm = std::chrono::milliseconds(2000));

  // The child's SpawnRequest::descendant_mark; set before the child runs
  // anything of the caller's. Reaping then also ends whatever still carries
  // the mark (processes a dead child orphaned), and kill_group() and
  // end_descendants() end the child's tree first.
  void set_descendant_mark(std::string mark) { descendant_mark_ = std::move(mark); }
  // Kills everything below the child (a subreaper: also what it orphaned),
  // leaving the child itself running. No-op without a mark, or once the
  // child has exited (its orphans left the tree then: reaping finds them).
  void end_descendants(std::chrono::milliseconds budget = std::chrono::milliseconds(2000));

 private:
  std::optional<int> reap(bool block);
  bool group_alive() const;

  pid_t pid_;
  UniqueFd pidfd_;
  std::mutex mutex_;
  std::optional<int> returncode_;
  std::string descendant_mark_;
};

}  // namespace o4s::proc
