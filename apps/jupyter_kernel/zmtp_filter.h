// What one peer connection of the kernel's sockets may make libzmq hold.
//
// libzmq bounds one frame (ZMQ_MAXMSGSIZE) but not a message: it keeps the
// frames of a multipart message in the connection's pipe until the last
// one arrives, so a peer that never ends a message (many frames, each under
// the bound) grows the kernel without end, and nothing above libzmq can
// read those frames to drop them. This filter sits below libzmq instead: it
// reads the ZMTP 3 byte stream of a connection (the greeting, then frames:
// a flags byte, a 1- or 8-byte size, the body) as libzmq reads it from the
// socket, and when a message passes its bounds (parts, bytes, one frame's
// size) it ends that message for libzmq with an empty last frame and
// swallows the rest of it unread by libzmq: nothing of it is buffered. The
// cut message then fails the signature check and is dropped there.
// A peer that does not speak ZMTP 3 (libzmq would accept 1.0 and 2.0 with
// other framings) is disconnected; so is a command frame over the bound.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace o4s::jupyter_app {

// Bytes of unfinished messages that all connections together may make
// libzmq hold: a bound per connection alone lets many connections add up.
class InFlightBudget {
 public:
  explicit InFlightBudget(std::uint64_t limit) : limit_(limit) {}
  // False, with nothing taken, when `bytes` more would pass the limit.
  bool take(std::uint64_t bytes);
  void give(std::uint64_t bytes) { used_.fetch_sub(bytes); }
  std::uint64_t used() const { return used_.load(); }

 private:
  const std::uint64_t limit_;
  std::atomic<std::uint64_t> used_{0};
};

struct MessageBounds {
  std::uint64_t max_frame = 0;          // one frame's body
  std::uint64_t max_message = 0;        // all of one message's bodies
  std::uint32_t max_parts = 0;          // frames in one message
  InFlightBudget* in_flight = nullptr;  // shared by every connection; null: none
};

class ZmtpFilter {
 public:
  explicit ZmtpFilter(MessageBounds bounds) : bounds_(bounds) {}
  ZmtpFilter(const ZmtpFilter&) = delete;
  ZmtpFilter& operator=(const ZmtpFilter&) = delete;
  ~ZmtpFilter() { release(); }

  // Gives back what the unfinished message holds of the shared budget
  // (the peer is gone: libzmq dropped that message with the connection).
  void release();

  enum class Outcome { kPass, kDisconnect };
  // Consumes bytes read from the peer and appends to `out` what libzmq may
  // read in their place (the same bytes, but for a cut message).
  Outcome feed(std::string_view in, std::string& out);

  // Bytes that pass through unchanged from here on (the rest of a frame
  // body being kept): a reader may hand them to libzmq without feed(), then
  // say so with passed().
  std::uint64_t passing_body() const {
    return phase_ == Phase::kBody && !discarding_ ? body_left_ : 0;
  }
  void passed(std::uint64_t bytes);

  std::uint64_t cut_messages() const { return cut_messages_; }

 private:
  enum class Phase { kGreeting, kFlags, kSize, kBody };
  static constexpr std::size_t kGreetingBytes = 64;

  bool greeting_byte(unsigned char byte, std::string& out);
  void header_done(std::string& out, Outcome& outcome);
  bool over_bounds(std::uint64_t size) const;
  bool charge(std::uint64_t size);
  void end_frame();

  const MessageBounds bounds_;
  Phase phase_ = Phase::kGreeting;
  std::size_t greeting_seen_ = 0;
  unsigned char header_[9] = {};
  std::size_t header_have_ = 0;
  std::size_t header_need_ = 0;
  std::uint64_t body_left_ = 0;
  bool frame_more_ = false;
  bool frame_command_ = false;
  bool discarding_ = false;  // swallowing the rest of a cut message
  std::uint32_t message_parts_ = 0;
  std::uint64_t message_bytes_ = 0;
  std::uint64_t charged_ = 0;  // of bounds_.in_flight, for the message being read
  std::uint64_t cut_messages_ = 0;
};

}  // namespace o4s::jupyter_app
