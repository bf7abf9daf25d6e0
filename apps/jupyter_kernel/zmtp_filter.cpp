#include "zmtp_filter.h"

#include <algorithm>

namespace o4s::jupyter_app {

namespace {

// ZMTP 3 frame flags (rfc 23/ZMTP).
constexpr unsigned char kMore = 0x01;
constexpr unsigned char kLong = 0x02;
constexpr unsigned char kCommand = 0x04;

}  // namespace

bool InFlightBudget::take(std::uint64_t bytes) {
  std::uint64_t used = used_.load();
  do {
    if (bytes > limit_ || used > limit_ - bytes) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes));
  return true;
}

void ZmtpFilter::release() {
  if (bounds_.in_flight != nullptr && charged_ > 0) bounds_.in_flight->give(charged_);
  charged_ = 0;
}

bool ZmtpFilter::charge(std::uint64_t size) {
  if (bounds_.in_flight == nullptr) return true;
  if (!bounds_.in_flight->take(size)) return false;
  charged_ += size;
  return true;
}

bool ZmtpFilter::greeting_byte(unsigned char byte, std::string& out) {
  // The signature is 0xFF, eight bytes, then a byte with its low bit set;
  // byte 10 is the major version. libzmq takes anything else as an older
  // ZMTP with another framing, which this filter does not read: refused.
  const std::size_t at = greeting_seen_++;
  if (at == 0 && byte != 0xFF) return false;
  if (at == 9 && (byte & 0x01) == 0) return false;
  if (at == 10 && byte < 3) return false;
  out.push_back(static_cast<char>(byte));
  if (greeting_seen_ == kGreetingBytes) phase_ = Phase::kFlags;
  return true;
}

ZmtpFilter::Outcome ZmtpFilter::feed(std::string_view in, std::string& out) {
  Outcome outcome = Outcome::kPass;
  std::size_t i = 0;
  while (i < in.size() && outcome == Outcome::kPass) {
    const auto byte = static_cast<unsigned char>(in[i]);
    switch (phase_) {
      case Phase::kGreeting:
        if (!greeting_byte(byte, out)) return Outcome::kDisconnect;
        ++i;
        break;
      case Phase::kFlags:
        header_[0] = byte;
        header_have_ = 1;
        header_need_ = (byte & kLong) != 0 ? 9 : 2;
        phase_ = Phase::kSize;
        ++i;
        break;
      case Phase::kSize:
        header_[header_have_++] = byte;
        ++i;
        if (header_have_ == header_need_) header_done(out, outcome);
        break;
      case Phase::kBody: {
        const std::size_t take =
            static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, in.size() - i));
        if (!discarding_) out.append(in.substr(i, take));
        i += take;
        body_left_ -= take;
        if (body_left_ == 0) end_frame();
        break;
      }
    }
  }
  return outcome;
}

void ZmtpFilter::passed(std::uint64_t bytes) {
  body_left_ -= std::min(bytes, body_left_);
  if (phase_ == Phase::kBody && body_left_ == 0) end_frame();
}

bool ZmtpFilter::over_bounds(std::uint64_t size) const {
  return size > bounds_.max_frame || message_parts_ > bounds_.max_parts ||
         message_bytes_ > bounds_.max_message;
}

void ZmtpFilter::header_done(std::string& out, Outcome& outcome) {
  const unsigned char flags = header_[0];
  std::uint64_t size = 0;
  for (std::size_t k = 1; k < header_need_; ++k) size = (size << 8) | header_[k];
  frame_more_ = (flags & kMore) != 0;
  frame_command_ = (flags & kCommand) != 0;
  body_left_ = size;
  phase_ = Phase::kBody;
  if (discarding_) {
    // The rest of a cut message: swallowed, header and body.
  } else if (frame_command_) {
    // Handshake and heartbeat commands: one frame each, never long.
    if (size > bounds_.max_frame) {
      outcome = Outcome::kDisconnect;
      return;
    }
    out.append(reinterpret_cast<const char*>(header_), header_need_);
  } else {
    ++message_parts_;
    message_bytes_ += size;
    if (over_bounds(size) || !charge(size)) {
      // libzmq gets an empty last frame in its place: the message ends
      // there (and is dropped unsigned), and the rest goes nowhere.
      out.push_back('\0');
      out.push_back('\0');
      discarding_ = true;
      ++cut_messages_;
      release();
    } else {
      out.append(reinterpret_cast<const char*>(header_), header_need_);
    }
  }
  if (size == 0) end_frame();
}

void ZmtpFilter::end_frame() {
  phase_ = Phase::kFlags;
  if (frame_command_ || frame_more_) return;
  message_parts_ = 0;
  message_bytes_ = 0;
  discarding_ = false;
  release();  // the message is whole: libzmq hands it on
}

}  // namespace o4s::jupyter_app
