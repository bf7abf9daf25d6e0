// The bounded output of a background job (issue 30 point 4): its first
// bytes and a rolling tail, with a count of what fell between them. A job
// may print for hours; the host keeps at most head + 2 x tail bytes of it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace o4s::host {

class OutputWindow {
 public:
  static constexpr std::size_t kDefaultHeadBytes = 64 * 1024;
  static constexpr std::size_t kDefaultTailBytes = 192 * 1024;

  explicit OutputWindow(std::size_t head_bytes = kDefaultHeadBytes,
                        std::size_t tail_bytes = kDefaultTailBytes);

  void append(std::string_view text);

  // The head, a marker naming the bytes dropped (if any), the tail; cut on
  // UTF-8 sequence boundaries, so it always serialises.
  std::string render() const;
  std::size_t total_bytes() const { return total_; }
  std::size_t dropped_bytes() const;

 private:
  std::size_t head_cap_;
  std::size_t tail_cap_;
  std::string head_;
  // Everything after the head, trimmed to tail_cap_ bytes whenever it grows
  // past twice that (so trimming costs O(1) per appended byte).
  std::string tail_;
  std::size_t tail_seen_ = 0;  // bytes that ever went to tail_
  std::size_t total_ = 0;
  bool head_full_ = false;
};

}  // namespace o4s::host
