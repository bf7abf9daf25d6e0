#include "proc/stderr_tail.h"

namespace o4s::proc {

StderrTail::StderrTail(std::size_t budget) : budget_(budget) {}

void StderrTail::append(std::string_view bytes) {
  std::lock_guard lock(mutex_);
  seen_ += bytes.size();
  if (bytes.size() >= budget_) {
    dropped_ += ring_.size() + (bytes.size() - budget_);
    ring_.assign(bytes.substr(bytes.size() - budget_));
    return;
  }
  std::size_t overflow = ring_.size() + bytes.size();
  if (overflow > budget_) {
    std::size_t cut = overflow - budget_;
    ring_.erase(0, cut);
    dropped_ += cut;
  }
  ring_.append(bytes);
}

void StderrTail::mark_closed() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

std::string StderrTail::text() const {
  std::lock_guard lock(mutex_);
  return ring_;
}

std::size_t StderrTail::seen_bytes() const {
  std::lock_guard lock(mutex_);
  return seen_;
}

std::size_t StderrTail::dropped_bytes() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

std::size_t StderrTail::retained_bytes() const {
  std::lock_guard lock(mutex_);
  return ring_.size();
}

bool StderrTail::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

}  // namespace o4s::proc
