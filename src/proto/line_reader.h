// Bounded line reader over a blocking fd: the only place protocol bytes are
// read, so the frame cap is enforced before a line is materialised.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace o4s::proto {

class LineReader {
 public:
  // fd is borrowed; max_line bounds one line including its '\n'.
  LineReader(int fd, std::size_t max_line);

  // The next complete line with its '\n'; std::nullopt at end of stream.
  // A line longer than max_line is skipped up to its newline and reported as
  // a kProtocol error (counted in oversized_lines()); the reader stays usable.
  Result<std::optional<std::string>> read_line();

  std::size_t oversized_lines() const { return oversized_lines_; }

  // Latency for request/answer traffic. On this class of VM a blocked
  // reader's idle vCPU halts, and waking it costs tens of microseconds,
  // more than a short cell. With a spin budget and an O_NONBLOCK fd, the
  // first wait after arm_spin() polls with non-blocking reads for up to the
  // budget before it sleeps in poll(2). A wait that gets data within its
  // spin keeps the reader armed (frames arriving back to back); one that
  // has to sleep disarms it, so frames trickling in during a long cell wait
  // the ordinary way. A blocking fd simply blocks (the budget is unused).
  void set_spin_budget(std::chrono::microseconds budget) { spin_budget_ = budget; }
  // Safe from another thread (the writer arms; the reader spins).
  void arm_spin() { spin_armed_.store(true, std::memory_order_relaxed); }

  // While set, a reader sleeping for data also wakes when `fd` (borrowed)
  // turns readable and runs `on_wake` on the reading thread, then goes back
  // to waiting; on_wake must consume what made `fd` readable. This is how
  // output that arrives outside the protocol pipe (an R cell's sinks) is
  // delivered live by the thread that owns the cell. -1 clears it.
  void set_wake(int fd, std::function<void()> on_wake) {
    wake_fd_ = fd;
    on_wake_ = fd >= 0 ? std::move(on_wake) : nullptr;
  }

 private:
  Result<std::size_t> fill();
  Status wait_readable();

  int fd_;
  std::size_t max_line_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t oversized_lines_ = 0;
  std::chrono::microseconds spin_budget_{0};
  std::atomic<bool> spin_armed_{false};
  int wake_fd_ = -1;
  std::function<void()> on_wake_;
};

}  // namespace o4s::proto
