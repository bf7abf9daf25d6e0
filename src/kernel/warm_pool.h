// A pool of warm workers of one kind (one language with one sandbox
// setting), each started with its own fresh workspace (issue 28). A claim
// hands a started worker over at once; a worker is never handed out twice
// and never returns to the pool. One background thread refills the pool,
// one start at a time, never above its size; idle, it blocks on a
// condition variable (no polling).
//
// Failures stay clear: a pooled worker that died while waiting is
// discarded at claim, not handed out; a pool whose starts fail (a broken
// sandbox) stops trying and reports the reason at the next claim, which
// also lets it try again; an empty pool answers "none ready" and the
// caller starts a worker the normal way.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.h"
#include "kernel/kernel_manager.h"
#include "kernel/warm_worker.h"

namespace o4s::kernel {

class WarmPool {
 public:
  using Starter = std::function<Result<WarmWorker>()>;
  // Whether one more worker fits the owner's limits, given the `held`
  // (ready and starting) ones of this pool; called under the pool's lock,
  // so it must not call back into the pool.
  using Room = std::function<bool(std::size_t held)>;
  // The pool's workers (ready and starting) fell to `held` (a claim, a dead
  // one discarded, a failed start): the owner gives back what it counted
  // beyond that. Called under the pool's lock, as Room is: between the two,
  // the owner's count is never below the truth, and never left above it
  // (a pool whose starts fail asks for no room until its next claim).
  using Released = std::function<void(std::size_t held)>;
  // size 0: a pool that never starts anything (every claim is "none").
  WarmPool(std::size_t size, Starter start, Room room = nullptr, Released released = nullptr);
  ~WarmPool();
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;

  // A live, never-used worker, or nullopt when none is ready. An error
  // when the pool's last start failed: its reason (the next claim retries).
  Result<std::optional<WarmWorker>> claim();
  // Ready workers right now, and the ones being started.
  std::size_t ready();
  std::size_t pending();
  std::size_t size() const { return size_; }
  // Blocks until the pool is full, a start failed or it stopped; for
  // tests and benches. True when full.
  bool wait_full();
  // The ready workers' pids (memory reporting).
  std::vector<pid_t> ready_pids();
  // The owner's limits changed (a kernel ended): look at the room again.
  void poke();
  // A caller whose claim found none is starting a worker the normal way:
  // the refill starts nothing while any such start is in flight, so under
  // a burst the callers' own starts do not share the CPU with the pool's
  // (a refilled worker would come too late for them anyway). Held for the
  // caller's start; the refill resumes when the last one ends.
  class FallbackStart {
   public:
    explicit FallbackStart(WarmPool& pool);
    ~FallbackStart();
    FallbackStart(const FallbackStart&) = delete;
    FallbackStart& operator=(const FallbackStart&) = delete;

   private:
    WarmPool& pool_;
  };
  // Stops refilling and every pooled worker. Idempotent.
  void stop();

 private:
  void refill();
  bool wants_start() const;
  void report_held();  // mutex_ held

  const std::size_t size_;
  const Starter start_;
  const Room room_;
  const Released released_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<WarmWorker> ready_;
  std::size_t starting_ = 0;
  std::size_t fallbacks_ = 0;  // callers' own starts in flight (FallbackStart)
  std::optional<Error> failure_;
  bool stopping_ = false;
  std::thread thread_;
};

// A pool's start: a fresh 0700 workspace `<root>/<prefix><uuid>`, the
// options for it, and a warm worker started there, which owns the
// workspace (removed with it if it is never claimed); the directory goes
// again at once when the start fails.
Result<WarmWorker> start_in_fresh_workspace(
    const std::string& root, std::string_view prefix,
    const std::function<KernelOptions(const std::string& workspace)>& options_for,
    double init_timeout_s, std::optional<EnvMap> environment = std::nullopt);

}  // namespace o4s::kernel
