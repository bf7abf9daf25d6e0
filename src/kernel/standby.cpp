#include "kernel/standby.h"

#include <unistd.h>

#include <utility>

namespace o4s::kernel {

void WarmWorker::discard() {
  if (transport) {
    if (!transport->close(true)) transport->kill();
    transport.reset();
  }
  // rmdir removes only an empty directory: nothing a worker wrote is lost.
  if (owns_workspace && workspace) ::rmdir(workspace->c_str());
  owns_workspace = false;
}

StandbySlot::StandbySlot(Starter start) : start_(std::move(start)) {}

StandbySlot::~StandbySlot() { stop(); }

void StandbySlot::request(std::chrono::milliseconds after) {
  std::lock_guard lock(mutex_);
  if (stopping_ || ready_ || starting_) return;
  wanted_ = true;
  delay_ = after;
  // The thread starts on the first request: a kernel that never restarts
  // still gets its standby, but only once it has started itself.
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  wake_.notify_all();
}

void StandbySlot::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || wanted_; });
    if (stopping_) return;
    if (delay_.count() > 0) {
      wake_.wait_for(lock, std::exchange(delay_, std::chrono::milliseconds(0)),
                     [this] { return stopping_; });
      if (stopping_) return;
    }
    wanted_ = false;
    starting_ = true;
    lock.unlock();
    // A failed start leaves no standby: the next restart starts normally
    // and says why if that fails too.
    Result<WarmWorker> started = start_();
    lock.lock();
    starting_ = false;
    if (started && !stopping_) {
      ready_ = std::move(started.value());
    } else if (started) {
      lock.unlock();
      started.value().discard();
      lock.lock();
    }
    wake_.notify_all();
  }
}

std::optional<WarmWorker> StandbySlot::take() {
  std::optional<WarmWorker> taken;
  {
    std::lock_guard lock(mutex_);
    taken = std::exchange(ready_, std::nullopt);
  }
  if (taken && !taken->alive()) {
    taken->discard();
    return std::nullopt;
  }
  return taken;
}

bool StandbySlot::wait_ready() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return stopping_ || ready_ || (!starting_ && !wanted_); });
  return ready_.has_value();
}

std::optional<pid_t> StandbySlot::ready_pid() {
  std::lock_guard lock(mutex_);
  if (!ready_ || !ready_->transport) return std::nullopt;
  return ready_->transport->local_pid();
}

bool StandbySlot::held() {
  std::lock_guard lock(mutex_);
  return ready_.has_value() || starting_ || wanted_;
}

bool StandbySlot::give_up_ready() {
  std::optional<WarmWorker> given;
  {
    std::lock_guard lock(mutex_);
    given = std::exchange(ready_, std::nullopt);
  }
  if (!given) return false;
  given->discard();
  return true;
}

void StandbySlot::stop() {
  std::optional<WarmWorker> left;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    left = std::exchange(ready_, std::nullopt);
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  if (left) left->discard();
}

}  // namespace o4s::kernel
