// The attestation initialization handshake (spec kernel.md §3.5, §5.4).
#include <cstdio>

#include "base/random_id.h"
#include "kernel/frame_wait.h"
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"
#include "proto/limits.h"

namespace o4s::kernel {

namespace {

// The handshake as a frame loop handler: a few log lines may come first;
// the first other frame decides. Its failures carry no words of their own
// (an empty message): only a read or write error explains itself.
class HandshakeWait final : public FrameWait {
 public:
  explicit HandshakeWait(std::string init_id)
      : FrameWait("initialization", nullptr), init_id_(std::move(init_id)) {}

  Verdict judge(FrameKind kind, const Json&) override {
    if (kind != FrameKind::kLog) return Verdict::kAnswer;
    return ++logs_ <= proto::kLogFramesSkippedLimit ? Verdict::kConsumed : Verdict::kDesync;
  }
  Result<Json> accept(Json frame) override {
    if (proto::frame_type(frame) == proto::frame::kInitialized &&
        proto::frame_string(frame, "id") == init_id_) {
      return frame;
    }
    return refused();
  }
  EndRule end_rule() const override { return EndRule::kExitedDuring; }
  Error at_end(Error error, bool end_of_stream) override {
    return end_of_stream ? refused() : error;
  }
  Error desync_error() const override { return refused(); }

 private:
  static Error refused() { return make_error(ErrorCode::kHandshake, ""); }

  std::string init_id_;
  std::size_t logs_ = 0;
};

std::string format_seconds(double seconds) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", seconds);
  return buffer;
}

}  // namespace

Status KernelManager::handshake(const std::shared_ptr<Transport>& transport, double timeout_s) {
  // The deadline stops the worker, which is the transport-neutral way to
  // wake the one blocked reader.
  ArmedReply deadline(reply_watchdog_, transport, timeout_s);
  const std::string init_id = "initialize-" + uuid4();
  HandshakeWait wait(init_id);
  Result<Json> answer = send_and_await(Json{{"type", proto::frame::kInitialize},
                                            {"id", init_id},
                                            {"skill_attestation_key", random_hex(32)}},
                                       wait);
  const bool timed_out = deadline.finish();
  if (answer && !timed_out) return {};

  if (!transport->close(true)) transport->kill();
  std::string message = "kernel worker attestation initialization failed";
  if (timed_out) message += " after " + format_seconds(timeout_s) + "s deadline";
  Error error = make_error(ErrorCode::kHandshake, std::move(message));
  if (answer) return error;
  const Error& failure = answer.error();
  // A native failure (EPIPE, a read error) has no foreign exception to
  // chain, so its words go into the message instead of being lost.
  if (!failure.cause && !failure.message.empty()) error.message += ": " + failure.message;
  error.cause = failure.cause;
  return error;
}

}  // namespace o4s::kernel
