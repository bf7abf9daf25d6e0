// A cell's live stdout, gathered into fewer `stream` messages.
//
// Each iopub message costs the client about a millisecond to verify and
// decode (jupyter_client, Python), far more than the kernel spends on it,
// and Python's print() writes its text and its "\n" separately: a one-line
// print was two stream messages. Text that arrives within `window` of the
// first pending piece goes out as one message: when the window ends (a
// thread of its own publishes it, so a print followed by a long sleep still
// shows at once), when the pending text reaches `max_pending` bytes, or
// when the cell publishes anything else (in_order), which keeps the order
// of stdout, displays, stderr and the result as the cell produced them.
//
// Thread safety: every publish, timed or not, runs under one mutex, so the
// shell thread and the flusher never use xeus's publisher at once (a zmq
// socket may change threads only across a full barrier, which the mutex
// gives). The shell thread is blocked in the cell while the flusher runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace o4s::jupyter {

class StreamCoalescer {
 public:
  using Publish = std::function<void(const std::string& text)>;
  using Clock = std::chrono::steady_clock;

  // A few milliseconds: late enough to catch print()'s separate "\n" and a
  // short loop's lines, early enough that nobody sees the delay.
  static constexpr std::chrono::microseconds kDefaultWindow{3000};
  // About one stdout_chunk frame's worth: a flood goes out in large
  // messages, never held back for the window.
  static constexpr std::size_t kDefaultMaxPending = 256 * 1024;
  // A pending text that ends inside a line waits longer for the line's end
  // (print()'s "\n" comes right behind its text, unless the worker lost the
  // CPU in between), still too short for anyone to see.
  static constexpr std::chrono::microseconds kDefaultPartialLineWindow{50000};

  explicit StreamCoalescer(
      Publish publish, std::chrono::microseconds window = kDefaultWindow,
      std::size_t max_pending = kDefaultMaxPending,
      std::chrono::microseconds partial_line_window = kDefaultPartialLineWindow);
  ~StreamCoalescer();  // publishes what is pending, stops the flusher
  StreamCoalescer(const StreamCoalescer&) = delete;
  StreamCoalescer& operator=(const StreamCoalescer&) = delete;

  // Text for the stream; published within the window.
  void add(std::string_view text);
  // Publishes what is pending now.
  void flush();
  // Publishes what is pending, then runs `publish_other` (a display, the
  // stderr, the result) before any later timed flush can.
  void in_order(const std::function<void()>& publish_other);

 private:
  void flush_locked();
  void run();

  Publish publish_;
  const std::chrono::microseconds window_;
  const std::size_t max_pending_;
  const std::chrono::microseconds partial_line_window_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string pending_;
  std::optional<Clock::time_point> deadline_;  // set while text is pending
  Clock::time_point first_pending_;            // when the pending text began
  bool stopping_ = false;
  std::thread flusher_;  // started with the first pending text
};

}  // namespace o4s::jupyter
