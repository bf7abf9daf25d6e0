#include "kernel/warm_pool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/random_id.h"

namespace o4s::kernel {

WarmPool::WarmPool(std::size_t size, Starter start, Room room, Released released)
    : size_(size),
      start_(std::move(start)),
      room_(std::move(room)),
      released_(std::move(released)) {
  if (size_ > 0) thread_ = std::thread([this] { refill(); });
}

WarmPool::~WarmPool() { stop(); }

bool WarmPool::wants_start() const {
  const std::size_t held = ready_.size() + starting_;
  return !stopping_ && !failure_ && fallbacks_ == 0 && held < size_ && (!room_ || room_(held));
}

WarmPool::FallbackStart::FallbackStart(WarmPool& pool) : pool_(pool) {
  std::lock_guard lock(pool_.mutex_);
  ++pool_.fallbacks_;
}

WarmPool::FallbackStart::~FallbackStart() {
  std::lock_guard lock(pool_.mutex_);
  --pool_.fallbacks_;
  pool_.wake_.notify_all();
}

void WarmPool::report_held() {
  if (released_) released_(ready_.size() + starting_);
}

void WarmPool::poke() {
  std::lock_guard lock(mutex_);
  wake_.notify_all();
}

void WarmPool::refill() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || wants_start(); });
    if (stopping_) return;
    ++starting_;
    lock.unlock();
    Result<WarmWorker> started = start_();
    lock.lock();
    --starting_;
    if (!started) {
      failure_ = std::move(started).error();
      // The room granted for it is not used: give it back now (a failed
      // pool asks for room again only after its next claim).
      report_held();
    } else if (stopping_) {
      lock.unlock();
      started.value().discard();
      lock.lock();
    } else {
      ready_.push_back(std::move(started.value()));
    }
    wake_.notify_all();
  }
}

Result<std::optional<WarmWorker>> WarmPool::claim() {
  std::vector<WarmWorker> dead;
  std::optional<WarmWorker> claimed;
  {
    std::lock_guard lock(mutex_);
    if (failure_ && ready_.empty()) {
      Error error = std::exchange(failure_, std::nullopt).value();
      wake_.notify_all();  // the next start is a retry
      return error;
    }
    while (!ready_.empty()) {
      WarmWorker next = std::move(ready_.front());
      ready_.pop_front();
      if (next.alive()) {
        claimed = std::move(next);
        break;
      }
      dead.push_back(std::move(next));
    }
    report_held();
    wake_.notify_all();  // one taken or found dead: start its replacement
  }
  for (auto& worker : dead) worker.discard();
  return claimed;
}

std::size_t WarmPool::ready() {
  std::lock_guard lock(mutex_);
  return ready_.size();
}

std::size_t WarmPool::pending() {
  std::lock_guard lock(mutex_);
  return starting_;
}

bool WarmPool::wait_full() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] {
    return stopping_ || failure_ || ready_.size() >= size_ || (starting_ == 0 && !wants_start());
  });
  return ready_.size() >= size_;
}

std::vector<pid_t> WarmPool::ready_pids() {
  std::lock_guard lock(mutex_);
  std::vector<pid_t> pids;
  for (auto& worker : ready_) {
    if (auto pid = worker.transport ? worker.transport->local_pid() : std::nullopt) {
      pids.push_back(*pid);
    }
  }
  return pids;
}

void WarmPool::stop() {
  std::deque<WarmWorker> left;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    left.swap(ready_);
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  for (auto& worker : left) worker.discard();
}

Result<WarmWorker> start_in_fresh_workspace(
    const std::string& root, std::string_view prefix,
    const std::function<KernelOptions(const std::string& workspace)>& options_for,
    double init_timeout_s, std::optional<EnvMap> environment) {
  std::string path = root + "/" + std::string(prefix) + uuid4();
  if (::mkdir(path.c_str(), 0700) != 0) return system_error("mkdir: " + path, errno);
  auto started =
      KernelManager::start_warm(options_for(path), init_timeout_s, std::move(environment));
  if (!started) {
    ::rmdir(path.c_str());
    return started;
  }
  started.value().owns_workspace = true;
  return started;
}

}  // namespace o4s::kernel
