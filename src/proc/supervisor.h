// The process-wide supervisor thread. Every worker is spawned from it because
// Linux ties the parent-death signal (bubblewrap's --die-with-parent) to the
// thread that forked: a kernel created on a short-lived request thread must
// not die with that thread. The same thread drains every worker's stderr with
// one epoll set, so a noisy worker cannot fill its pipe and deadlock a cell,
// and an extra kernel costs no extra thread.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "proc/drain_target.h"
#include "proc/spawn.h"
#include "proc/stderr_tail.h"

namespace o4s::proc {

struct SupervisedChild {
  pid_t pid = -1;
  UniqueFd pidfd;
  UniqueFd stdin_write;
  UniqueFd stdout_read;
  std::shared_ptr<StderrTail> stderr_tail;
};

class ProcessSupervisor {
 public:
  // Created on first use and intentionally never destroyed: its thread must
  // outlive every worker, including during interpreter shutdown.
  static ProcessSupervisor& instance();

  // Spawns on the supervisor thread and waits for the result; stderr is
  // drained into a tail of tail_budget bytes until the child's last writer
  // closes it.
  Result<SupervisedChild> spawn(const SpawnRequest& request, std::size_t tail_budget);

  bool on_supervisor_thread() const;

  // Drains `fd` (made non-blocking) into `target` with the same epoll set
  // until end of stream or unwatch(). Callable from any thread. The token
  // names this watch: a descriptor number can be reused once a watch ended.
  std::uint64_t watch(UniqueFd fd, std::shared_ptr<DrainTarget> target);
  // Ends a watch and hands its descriptor back (for the caller to read the
  // rest itself); once it returns, the supervisor thread no longer reads
  // it. Invalid if the watch had already ended at end of stream.
  UniqueFd unwatch(std::uint64_t token);

 private:
  ProcessSupervisor();
  void run();
  void post(std::function<void()> task);
  void drain(int fd);

  UniqueFd epoll_;
  UniqueFd wakeup_;  // eventfd
  std::mutex mutex_;
  std::deque<std::function<void()>> tasks_;
  struct Watched {
    UniqueFd fd;
    std::shared_ptr<DrainTarget> target;
    std::uint64_t token = 0;
  };
  std::mutex watch_mutex_;  // guards watched_ and next_token_
  std::unordered_map<int, Watched> watched_;
  std::uint64_t next_token_ = 1;
  // One read buffer for every drain (under watch_mutex_): large reads keep a cell printing
  // hundreds of megabytes into a sink from costing a syscall per 8 KiB.
  std::vector<char> buffer_;
  std::thread thread_;
};

}  // namespace o4s::proc
