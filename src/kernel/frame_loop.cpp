// The manager's one frame loop: every frame a worker sends is read here
// (through the readline seam), routed by type (kernel/frame_route.h) and
// judged by the request that waits for it (kernel/frame_wait.h).
#include "kernel/cell_io.h"
#include "kernel/frame_route.h"
#include "kernel/frame_wait.h"
#include "kernel/kernel_manager.h"

namespace o4s::kernel {

namespace {

bool bound_passed(const FrameWait& wait) { return wait.bound() && wait.bound()->finish(); }

}  // namespace

Result<Json> KernelManager::await_frames(FrameWait& wait) {
  for (;;) {
    auto next = readline();
    if (!next || !next->has_value()) {
      if (bound_passed(wait)) return unanswered_error(wait.what());
      if (!next) return wait.at_end(std::move(next).error(), false);
      return wait.at_end(
          wait.end_rule() == EndRule::kWorkerDied
              ? worker_died_error()
              : make_error(ErrorCode::kWorkerExited, "kernel worker exited during " + wait.what()),
          true);
    }
    Json& frame = **next;
    const FrameKind kind = route_of(frame);
    switch (wait.judge(kind, frame)) {
      case Verdict::kAnswer:
        if (bound_passed(wait)) return unanswered_error(wait.what());
        return wait.accept(std::move(frame));
      case Verdict::kConsumed:
        break;
      case Verdict::kStale:
        count_stale(kind, frame);
        break;
      case Verdict::kStanding:
        if (Status done = standing_duty(kind, frame, wait); !done) return std::move(done).error();
        break;
      case Verdict::kDesync:
        if (bound_passed(wait)) return unanswered_error(wait.what());
        return wait.desync_error();
    }
  }
}

Result<Json> KernelManager::send_and_await(const Json& request, FrameWait& wait) {
  Status sent = send(request);
  if (!sent) return bound_passed(wait) ? unanswered_error(wait.what()) : std::move(sent).error();
  return await_frames(wait);
}

void KernelManager::count_stale(FrameKind kind, const Json& frame) {
  if (kind == FrameKind::kStdoutChunk) {
    // A logging handler bound to a finished cell's stdout, or a thread
    // writing after its cell returned: not this cell's output.
    stale_stdout_chunks_.fetch_add(1);
  } else if (kind == FrameKind::kDisplay) {
    stale_displays_.fetch_add(1);
  } else if (proto::frame_type(frame) == proto::frame::kResponse) {
    // A cell that wrote a forged response onto the protocol pipe must not
    // shift every later result by one cell.
    stale_responses_.fetch_add(1);
    remember_log("host dropped a response frame for another cell");
  }
}

Status KernelManager::standing_duty(FrameKind kind, const Json& frame, FrameWait& wait) {
  switch (kind) {
    case FrameKind::kHostCall:
      return serve_host_call(frame, wait);
    case FrameKind::kInputRequest:
      return answer_input(frame, wait);
    case FrameKind::kLog:
      if (std::string msg = proto::frame_string(frame, "msg"); !msg.empty()) remember_log(msg);
      return {};
    default:
      return {};
  }
}

Status KernelManager::serve_host_call(const Json& frame, FrameWait& wait) {
  // The host's own wait (an approval prompt) is not the worker's silence:
  // the idle bound stops meanwhile and starts afresh after.
  ArmedReply* bound = wait.bound();
  if (bound && bound->pause()) return unanswered_error(wait.what());
  Status serviced = service_host_call(frame);
  if (!serviced) return serviced;
  if (bound) bound->rearm();
  return {};
}

bool KernelManager::replies_unread(std::string_view what) {
  // A worker that sends requests without reading the replies would fill
  // its input and block the replying thread in write() for good, with the
  // worker blocked writing to us: stop answering instead.
  auto t = transport();
  auto unread = t ? t->unread_input_bytes() : std::nullopt;
  if (!unread || *unread <= kInputBacklogBytes) return false;
  remember_log("host stopped answering " + std::string(what) +
               ": the worker does not read replies");
  return true;
}

Status KernelManager::answer_input(const Json& frame, FrameWait& wait) {
  if (wait.input_flooded) return {};
  if (replies_unread("input requests")) {
    wait.input_flooded = true;
    return {};
  }
  const bool running = wait.is_running_cell(frame);
  return send(input_reply(frame, running ? wait.input_source() : nullptr, running));
}

}  // namespace o4s::kernel
