#include "kernel/reply_watchdog.h"

#include <algorithm>
#include <utility>

namespace o4s::kernel {

ReplyWatchdog::~ReplyWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_ && thread_->joinable()) thread_->join();
}

void ReplyWatchdog::arm(std::shared_ptr<Transport> transport, double seconds) {
  std::lock_guard lock(mutex_);
  target_ = std::move(transport);
  fired_ = false;
  // Clamped: a caller's "forever" (a huge or infinite timeout) must not
  // overflow the clock's integer ticks; a third of a century is forever here.
  seconds = seconds >= 0.0 ? std::min(seconds, 1e9) : 0.0;  // NaN too
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(seconds));
  if (!thread_) thread_.emplace([this] { run(); });
  cv_.notify_all();
}

bool ReplyWatchdog::disarm() {
  std::lock_guard lock(mutex_);
  target_.reset();
  return std::exchange(fired_, false);
}

void ReplyWatchdog::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!target_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::no_timeout) continue;
    if (!target_ || std::chrono::steady_clock::now() < deadline_) continue;
    std::shared_ptr<Transport> silent = std::move(target_);
    fired_ = true;
    // Killed outside the lock: kill() waits on the process group.
    lock.unlock();
    silent->kill();
    lock.lock();
  }
}

}  // namespace o4s::kernel
