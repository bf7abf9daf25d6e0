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

  // Queues `task` to run on the supervisor thread, between drains; it must
  // not block for long (every worker's stderr waits behind it).
  void post(std::function<void()> task);

 private:
  ProcessSupervisor();
  void run();
  void drain(std::uint64_t token);

  UniqueFd epoll_;
  static constexpr std::uint64_t kWakeupToken = 0;
  static constexpr std::uint64_t kFirstWatchToken = 1;
  UniqueFd wakeup_;  // eventfd
  std::mutex mutex_;
  std::deque<std::function<void()>> tasks_;
  struct Watched {
    UniqueFd fd;
    std::shared_ptr<DrainTarget> target;
  };
  // Keyed (and tagged in epoll) by token, never by descriptor number: an
  // event already returned by epoll_wait for a descriptor that unwatch()
  // closed meanwhile would otherwise drain whatever reused that number,
  // such as the next cell's fifo before its writer opened it, where read()
  // says end of stream and the writer's blocking open then never returns.
  std::mutex watch_mutex_;  // guards watched_ and next_token_
  std::unordered_map<std::uint64_t, Watched> watched_;
  std::uint64_t next_token_ = kFirstWatchToken;
  // One read buffer for every drain (under watch_mutex_): large reads keep a cell printing
  // hundreds of megabytes into a sink from costing a syscall per 8 KiB.
  std::vector<char> buffer_;
  std::thread thread_;
};

}  // namespace o4s::proc
