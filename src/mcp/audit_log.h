// The connection audit rows, written by a thread of their own: a SQLite
// commit costs milliseconds (an fsync), which no tool call should wait
// for. The queue is bounded; rows past it are counted and said on stderr.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "store/store.h"

namespace o4s::mcp {

class AuditLog {
 public:
  explicit AuditLog(std::shared_ptr<store::Store> store);
  ~AuditLog();  // writes what is queued, then stops

  void record(store::HostCallRecord row);
  // Waits (at most `timeout`) until every queued row is written: a signal
  // that ends the process calls it before exiting.
  bool flush(std::chrono::milliseconds timeout);

 private:
  void drain();

  std::shared_ptr<store::Store> store_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<store::HostCallRecord> queue_;
  std::size_t dropped_ = 0;
  bool stopping_ = false;
  bool writing_ = false;  // a row taken from the queue is being written
  std::condition_variable written_;
  std::optional<std::chrono::steady_clock::time_point> stop_by_;  // set once stopping
  std::thread writer_;
};

}  // namespace o4s::mcp
