#include "kernel/cell_interrupts.h"

#include <utility>

namespace o4s::kernel {

CellInterrupts::Entered::Entered(CellInterrupts& owner) : owner_(owner) {
  std::lock_guard lock(owner_.mutex_);
  ++owner_.entered_;
}

CellInterrupts::Entered::~Entered() {
  std::lock_guard lock(owner_.mutex_);
  // The last call left without sending its cell (a dead worker, a busy
  // kernel): what was kept for it must not stop a later one.
  if (--owner_.entered_ == 0) owner_.kept_for_next_ = false;
}

CellInterrupts::Begun CellInterrupts::begin() {
  std::lock_guard lock(mutex_);
  outstanding_ = true;
  frame_sent_ = std::exchange(kept_for_next_, false);
  return Begun{++seq_, frame_sent_};
}

void CellInterrupts::end() {
  std::lock_guard lock(mutex_);
  outstanding_ = false;
}

std::optional<std::uint64_t> CellInterrupts::claim(bool for_next_cell) {
  std::lock_guard lock(mutex_);
  if (!outstanding_) {
    if (for_next_cell || entered_ > 0) kept_for_next_ = true;
    return std::nullopt;
  }
  if (std::exchange(frame_sent_, true)) return std::nullopt;
  return seq_;
}

void CellInterrupts::forget_kept() {
  std::lock_guard lock(mutex_);
  kept_for_next_ = false;
}

}  // namespace o4s::kernel
