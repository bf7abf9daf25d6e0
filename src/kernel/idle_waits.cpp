#include "kernel/idle_waits.h"

#include <optional>

#include "proto/limits.h"

namespace o4s::kernel {

namespace {

// What the fenced and the resend waits make of a frame that is not their
// answer: a host call or a log line is served whoever waits; a chunk is a
// finished cell's. Anything else is theirs to judge.
std::optional<Verdict> between_requests(FrameKind kind) {
  switch (kind) {
    case FrameKind::kHostCall:
    case FrameKind::kLog:
      return Verdict::kStanding;
    case FrameKind::kStdoutChunk:
      return Verdict::kStale;
    default:
      return std::nullopt;
  }
}

bool is_reply(FrameKind kind, const Json& frame, std::string_view type, const std::string& id) {
  return kind == FrameKind::kReply && proto::frame_type(frame) == type &&
         proto::frame_string(frame, "id") == id;
}

// The worker's `error` field (a string, or anything else dumped); nullopt
// when absent or null.
std::optional<std::string> reported_error(const Json& frame) {
  auto error = frame.find("error");
  if (error == frame.end() || error->is_null()) return std::nullopt;
  return error->is_string() ? error->get<std::string>() : error->dump();
}

}  // namespace

Verdict ReplyWait::judge(FrameKind kind, const Json& frame) {
  if (is_reply(kind, frame, reply_type_, id_)) return Verdict::kAnswer;
  switch (kind) {
    case FrameKind::kLog:
      // Kept up to the bound; past it still tolerated, no longer kept.
      return ++logs_ <= proto::kLogFramesSkippedLimit ? Verdict::kStanding : Verdict::kConsumed;
    case FrameKind::kStdoutChunk:
    case FrameKind::kDisplay:
      return Verdict::kStale;
    case FrameKind::kInputRequest:  // refused: no cell is running
    case FrameKind::kHostCall:
      return Verdict::kStanding;
    default:
      return Verdict::kDesync;
  }
}

Result<Json> ReplyWait::accept(Json frame) {
  if (auto error = reported_error(frame)) {
    return make_error(ErrorCode::kProtocol, what() + " failed: " + *error);
  }
  frame.erase("type");
  frame.erase("id");
  return frame;
}

Verdict VariablesWait::judge(FrameKind kind, const Json& frame) {
  if (is_reply(kind, frame, proto::frame::kVariablesResponse, id_)) return Verdict::kAnswer;
  if (kind == FrameKind::kLog && ++logs_ <= proto::kLogFramesSkippedLimit) {
    return Verdict::kConsumed;
  }
  return Verdict::kDesync;
}

Result<Json> VariablesWait::accept(Json frame) {
  if (auto error = reported_error(frame)) {
    return make_error(ErrorCode::kProtocol, "variable inspection failed: " + *error);
  }
  auto variables = frame.find("variables");
  if (variables == frame.end() || !variables->is_array()) {
    return make_error(ErrorCode::kProtocol, "invalid variables response from kernel worker");
  }
  return frame;
}

Verdict FencedWait::judge(FrameKind kind, const Json& frame) {
  if (!answer_ && is_reply(kind, frame, reply_type_, id_)) {
    answer_ = frame;
    return Verdict::kConsumed;
  }
  if (is_reply(kind, frame, proto::frame::kStdoutText, fence_id_)) return Verdict::kAnswer;
  if (auto common = between_requests(kind)) return *common;
  return ++skipped_ > proto::kLogFramesSkippedLimit * 8 ? Verdict::kDesync : Verdict::kConsumed;
}

Result<Json> FencedWait::accept(Json frame) {
  (void)frame;  // the fence's answer says only "done"
  return answer_ ? std::move(*answer_) : Json(nullptr);
}

Verdict StdoutResendWait::judge(FrameKind kind, const Json& frame) {
  if (is_reply(kind, frame, proto::frame::kStdoutText, cell_id_)) return Verdict::kAnswer;
  return between_requests(kind).value_or(Verdict::kConsumed);
}

Result<Json> StdoutResendWait::accept(Json frame) {
  auto text = frame.find("text");
  if (frame.contains("error") || text == frame.end() || !text->is_string()) {
    return make_error(ErrorCode::kProtocol, "worker kept no stdout for the cell");
  }
  return std::move(*text);
}

}  // namespace o4s::kernel
