#include "mcp/audit_log.h"

#include <cstdio>
#include <utility>
#include <vector>

namespace o4s::mcp {

namespace {

constexpr std::size_t kQueueBound = 10000;
// Rows written per transaction.
constexpr std::size_t kBatch = 256;
// At exit the queue is written for at most this long; the rest is counted
// on stderr (an exit must not take minutes behind a slow disk).
constexpr auto kDrainAtExit = std::chrono::seconds(5);

}  // namespace

AuditLog::AuditLog(std::shared_ptr<store::Store> store) : store_(std::move(store)) {
  writer_ = std::thread([this] { drain(); });
}

AuditLog::~AuditLog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
}

void AuditLog::record(store::HostCallRecord row) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= kQueueBound) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(row));
  }
  wake_.notify_one();
}

bool AuditLog::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return written_.wait_for(lock, timeout, [this] { return queue_.empty() && !writing_; });
}

void AuditLog::drain() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything written
    if (stopping_ && !stop_by_) stop_by_ = std::chrono::steady_clock::now() + kDrainAtExit;
    if (stop_by_ && std::chrono::steady_clock::now() >= *stop_by_) {
      std::fprintf(stderr, "openai4s-mcp: audit: %zu rows not written at exit\n",
                   queue_.size() + dropped_);
      queue_.clear();
      break;
    }
    // Everything queued so far (at most kBatch rows) in one commit: under
    // a flood, one fsync serves many calls.
    std::vector<store::HostCallRecord> batch;
    while (!queue_.empty() && batch.size() < kBatch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    std::size_t dropped = std::exchange(dropped_, 0);
    writing_ = true;
    lock.unlock();
    if (dropped > 0) {
      std::fprintf(stderr, "openai4s-mcp: audit: %zu rows dropped (the store is too slow)\n",
                   dropped);
    }
    if (auto logged = store_->log_host_calls(batch); !logged) {
      std::fprintf(stderr, "openai4s-mcp: audit: %zu rows not written: %s\n", batch.size(),
                   logged.error().message.c_str());
    }
    lock.lock();
    writing_ = false;
    if (queue_.empty()) written_.notify_all();
  }
}

}  // namespace o4s::mcp
