// A kernel's standby worker: one warm worker for its own workspace, started
// in the background after each start or restart so the next restart swaps
// it in instead of waiting for a spawn (issue 28). Idle costs nothing: the
// starter thread blocks on a condition variable between requests.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "base/result.h"
#include "kernel/warm_worker.h"

namespace o4s::kernel {

class StandbySlot {
 public:
  using Starter = std::function<Result<WarmWorker>()>;
  explicit StandbySlot(Starter start);
  ~StandbySlot();
  StandbySlot(const StandbySlot&) = delete;
  StandbySlot& operator=(const StandbySlot&) = delete;

  // Starts one in the background unless one is ready or being started,
  // `after` a while (a swap's first cell then runs without a spawn beside
  // it on the CPU); wait_ready() waits through the delay.
  void request(std::chrono::milliseconds after = std::chrono::milliseconds(0));
  // The ready standby, if it is still alive; a dead one is discarded (the
  // caller starts normally and requests the next). Never waits for a start
  // in progress.
  std::optional<WarmWorker> take();
  // Waits (bounded by the start's own deadline) for a start in progress;
  // for tests and benches that want a restart to find its standby.
  bool wait_ready();
  // Stops the thread and the standby worker. Idempotent.
  void stop();
  // The ready standby's worker pid (memory reporting), if any.
  std::optional<pid_t> ready_pid();
  // A standby is ready, being started or about to be: a worker an owner
  // counts against its limit.
  bool held();
  // Discards the ready standby so that its room serves a kernel; false
  // when none is ready (a start in progress is left to finish).
  bool give_up_ready();

 private:
  void run();

  const Starter start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<WarmWorker> ready_;
  bool wanted_ = false;
  std::chrono::milliseconds delay_{0};  // before the wanted start
  bool starting_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace o4s::kernel
