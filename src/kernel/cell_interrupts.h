// Which cell an interrupt belongs to.
//
// An interrupt is one SIGINT, and a signal that reaches the worker before
// the cell's code starts (the execute frame still in the pipe, or read but
// not yet armed) finds nothing to stop: the cell then runs to its end. So
// each cell sent gets a number (`seq` in its execute frame), and an
// interrupt while it is outstanding also sends an `interrupt` frame naming
// it, once, before the signal. The worker checks for that frame when it
// arms the cell; whichever of the two arrives in time stops it.
//
// An interrupt with no cell outstanding is idle (Jupyter's meaning: it
// stops nothing) unless a cell is on its way: an execute() call waiting for
// the manager, or one the caller knows of (a background job, a Jupyter
// execute_request being served). Then it is kept for the next cell, whose
// execute frame the interrupt's frame precedes.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>

namespace o4s::kernel {

class CellInterrupts {
 public:
  // Held by an execute() call from its entry (before it may wait for the
  // manager) to its return.
  class Entered {
   public:
    explicit Entered(CellInterrupts& owner);
    ~Entered();
    Entered(const Entered&) = delete;
    Entered& operator=(const Entered&) = delete;

   private:
    CellInterrupts& owner_;
  };

  struct Begun {
    std::uint64_t seq = 0;
    // An interrupt was kept for this cell: its frame goes before the
    // execute frame (no signal: the worker is idle until it arms).
    bool interrupted_already = false;
  };
  Begun begin();
  void end();
  // The seq whose `interrupt` frame the caller must send now: only for an
  // outstanding cell whose frame was not sent yet. With no cell
  // outstanding, `for_next_cell` keeps the interrupt for the next begin().
  std::optional<std::uint64_t> claim(bool for_next_cell);
  void forget_kept();

 private:
  std::mutex mutex_;
  int entered_ = 0;
  std::uint64_t seq_ = 0;
  bool outstanding_ = false;
  bool frame_sent_ = false;
  bool kept_for_next_ = false;
};

}  // namespace o4s::kernel
