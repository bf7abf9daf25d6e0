// A request that waits for its answer in the manager's frame loop
// (KernelManager::await_frames). The loop reads every frame, looks up its
// kind (kernel/frame_route.h) and asks the waiting request what the frame is
// to it; the request only judges, the loop does what the verdict says. So
// each request kind is a handler with its own rules (which reply is its own,
// what it tolerates meanwhile), while reading, bounds, malformed lines, the
// stale counters and host calls are handled once, in the loop.
#pragma once

#include <string>

#include "base/result.h"
#include "kernel/frame_route.h"
#include "kernel/kernel_hooks.h"
#include "kernel/reply_watchdog.h"

namespace o4s::kernel {

enum class Verdict {
  kAnswer,    // the request's own answer: the loop ends with accept(frame)
  kConsumed,  // taken by the request, or ignored by it; keep reading
  kStale,     // another (finished) request's: counted in the stale_* counters
  kStanding,  // the manager's standing duty: serve the host call, keep the
              // log line, answer the input request
  kDesync,    // breaks this request's protocol: the wait fails
};

// What the loop does at the end of the stream before the answer.
enum class EndRule {
  kWorkerDied,    // the worker's exit, with its last words (worker_died_error)
  kExitedDuring,  // "kernel worker exited during <what>"
};

class FrameWait {
 public:
  // `bound` (may be null) is the wait's idle bound; the loop pauses it while
  // the host serves a host call and checks it before any outcome.
  FrameWait(std::string what, ArmedReply* bound) : what_(std::move(what)), bound_(bound) {}
  virtual ~FrameWait() = default;
  FrameWait(const FrameWait&) = delete;
  FrameWait& operator=(const FrameWait&) = delete;

  const std::string& what() const { return what_; }
  ArmedReply* bound() const { return bound_; }

  virtual Verdict judge(FrameKind kind, const Json& frame) = 0;
  // The answer (a frame judged kAnswer), checked and shaped for the caller.
  virtual Result<Json> accept(Json frame) { return frame; }
  virtual EndRule end_rule() const { return EndRule::kWorkerDied; }
  // The error the wait ends with when a read fails, or at the end of the
  // stream (then `error` is what end_rule() says).
  virtual Error at_end(Error error, bool end_of_stream) {
    (void)end_of_stream;
    return error;
  }
  virtual Error desync_error() const {
    return make_error(ErrorCode::kProtocol, "kernel protocol desynchronized during " + what_);
  }
  // Who answers an input_request judged kStanding: the running cell's
  // caller, or nobody (the request is refused with a reason).
  virtual bool is_running_cell(const Json& input_request) const {
    (void)input_request;
    return false;
  }
  virtual InputSource* input_source() const { return nullptr; }

  // Set by the loop once the worker stopped reading input replies.
  bool input_flooded = false;

 private:
  std::string what_;
  ArmedReply* bound_;
};

}  // namespace o4s::kernel
