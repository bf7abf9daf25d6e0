#include "proto/line_reader.h"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace o4s::proto {

namespace {
// Small to start: an idle kernel's reader should cost the host a page, not
// 64 KiB (host memory per kernel is a measured target). It doubles on demand.
constexpr std::size_t kInitialBuffer = 4096;
constexpr std::size_t kShrinkAbove = 1 << 20;
}  // namespace

LineReader::LineReader(int fd, std::size_t max_line)
    : fd_(fd), max_line_(max_line), buffer_(kInitialBuffer) {}

Result<std::size_t> LineReader::fill() {
  if (begin_ == end_) {
    begin_ = end_ = 0;
    // One huge frame must not pin its buffer for the life of the kernel.
    if (buffer_.size() > kShrinkAbove) {
      buffer_.assign(kInitialBuffer, '\0');
      buffer_.shrink_to_fit();
    }
  }
  if (end_ == buffer_.size()) {
    if (begin_ > buffer_.size() / 2) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    } else {
      buffer_.resize(buffer_.size() * 2);
    }
  }
  bool spin = spin_budget_.count() > 0 && spin_armed_.exchange(false, std::memory_order_relaxed);
  const auto spin_until = std::chrono::steady_clock::now() + spin_budget_;
  for (;;) {
    ssize_t n = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n >= 0) {
      end_ += static_cast<std::size_t>(n);
      // Data within the spin: more is likely close behind (a cell's output
      // then its response), so the next wait spins too. A wait that had to
      // sleep leaves the reader disarmed until the next write.
      if (spin && n > 0) spin_armed_.store(true, std::memory_order_relaxed);
      return static_cast<std::size_t>(n);
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return system_error("read protocol pipe", errno);
    if (spin && std::chrono::steady_clock::now() < spin_until) {
      // The wakee may be queued on this very CPU (a packing scheduler puts
      // it beside the waker): yield, or the spin only delays the answer.
      ::sched_yield();
      continue;
    }
    spin = false;
    Status ready = wait_readable();
    if (!ready) return std::move(ready).error();
  }
}

Status LineReader::wait_readable() {
  pollfd watched[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  nfds_t count = wake_fd_ >= 0 ? 2 : 1;
  // POLLHUP and POLLERR also end the wait; the read that follows reports them.
  if (::poll(watched, count, -1) < 0 && errno != EINTR)
    return system_error("poll protocol pipe", errno);
  if (count == 2 && (watched[1].revents & POLLIN) != 0 && on_wake_) on_wake_();
  return {};
}

Result<std::optional<std::string>> LineReader::read_line() {
  // Bytes after begin_ already searched for '\n'; relative to begin_ so it
  // survives fill() compacting the buffer.
  std::size_t searched = 0;
  bool discarding = false;
  for (;;) {
    const char* start = buffer_.data() + begin_ + searched;
    const void* nl = std::memchr(start, '\n', end_ - begin_ - searched);
    if (nl != nullptr) {
      std::size_t stop =
          static_cast<std::size_t>(static_cast<const char*>(nl) - buffer_.data()) + 1;
      // The cap also applies to a line that arrived whole in one read.
      if (discarding || stop - begin_ > max_line_) {
        begin_ = stop;
        ++oversized_lines_;
        return make_error(ErrorCode::kProtocol, "oversized frame dropped (over the frame cap)");
      }
      std::string line(buffer_.data() + begin_, stop - begin_);
      begin_ = stop;
      return std::optional<std::string>(std::move(line));
    }
    searched = end_ - begin_;
    if (discarding || searched >= max_line_) {
      // Over the cap with no newline yet: drop what we hold and keep
      // discarding until the newline, so memory stays bounded.
      discarding = true;
      begin_ = end_ = searched = 0;
    }
    auto got = fill();
    if (!got.ok()) return std::move(got).error();
    if (got.value() == 0) {
      if (discarding) {
        ++oversized_lines_;
        return make_error(ErrorCode::kProtocol, "oversized frame cut off by end of stream");
      }
      if (begin_ == end_) return std::optional<std::string>();
      // A final line without '\n' is still a line.
      std::string line(buffer_.data() + begin_, end_ - begin_);
      begin_ = end_;
      return std::optional<std::string>(std::move(line));
    }
  }
}

}  // namespace o4s::proto
