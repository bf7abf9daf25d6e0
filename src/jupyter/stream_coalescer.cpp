#include "jupyter/stream_coalescer.h"

#include <algorithm>
#include <utility>

namespace o4s::jupyter {

StreamCoalescer::StreamCoalescer(Publish publish, std::chrono::microseconds window,
                                 std::size_t max_pending,
                                 std::chrono::microseconds partial_line_window)
    : publish_(std::move(publish)),
      window_(window),
      max_pending_(max_pending),
      partial_line_window_(std::max(partial_line_window, window)) {}

StreamCoalescer::~StreamCoalescer() {
  {
    std::lock_guard lock(mutex_);
    flush_locked();
    stopping_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
}

void StreamCoalescer::add(std::string_view text) {
  if (text.empty()) return;
  std::unique_lock lock(mutex_);
  const bool first = pending_.empty();
  pending_.append(text);
  if (pending_.size() >= max_pending_) {
    flush_locked();
    return;
  }
  if (!first) {
    // Past its window, the text waited only for this line's end.
    if (pending_.back() == '\n' && Clock::now() >= first_pending_ + window_) flush_locked();
    return;
  }
  first_pending_ = Clock::now();
  deadline_ = first_pending_ + window_;
  // Started lazily: a kernel whose cells print nothing never has it. A
  // thread kept for the kernel's life costs one start, not one per cell.
  if (!flusher_.joinable()) flusher_ = std::thread([this] { run(); });
  lock.unlock();
  wake_.notify_one();
}

void StreamCoalescer::flush() {
  std::lock_guard lock(mutex_);
  flush_locked();
}

void StreamCoalescer::in_order(const std::function<void()>& publish_other) {
  std::lock_guard lock(mutex_);
  flush_locked();
  publish_other();
}

void StreamCoalescer::flush_locked() {
  deadline_.reset();
  if (pending_.empty()) return;
  std::string text;
  text.swap(pending_);
  publish_(text);
}

void StreamCoalescer::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!deadline_) {
      wake_.wait(lock, [this] { return stopping_ || deadline_.has_value(); });
      continue;
    }
    // A flush by another thread clears the deadline (and a later add sets
    // a new one): wait_until returns on the notify or the time, and the
    // loop looks again.
    const auto deadline = *deadline_;
    const auto now = Clock::now();
    const auto line_deadline = first_pending_ + partial_line_window_;
    if (now >= deadline && pending_.back() != '\n' && now < line_deadline) {
      deadline_ = line_deadline;  // the rest of the line is on its way
    } else if (now >= deadline) {
      flush_locked();
    } else {
      wake_.wait_until(lock, deadline);
    }
  }
}

}  // namespace o4s::jupyter
