// The waits of the requests an idle worker answers (frame loop handlers, see
// kernel/frame_wait.h): each knows its reply by type and id and what it
// tolerates until then. A thread a finished cell left running may still
// print, display, ask for input or call the host between cells.
#pragma once

#include <optional>
#include <string>

#include "kernel/frame_wait.h"

namespace o4s::kernel {

// complete / inspect (and any request answered by `<type>_reply`): strict,
// any frame that is neither the reply nor a finished cell's is a desync.
class ReplyWait final : public FrameWait {
 public:
  ReplyWait(std::string what, ArmedReply* bound, std::string_view reply_type,
            std::string request_id)
      : FrameWait(std::move(what), bound), reply_type_(reply_type), id_(std::move(request_id)) {}
  Verdict judge(FrameKind kind, const Json& frame) override;
  // The reply without its type and id; its `error`, if any, as a failure.
  Result<Json> accept(Json frame) override;
  EndRule end_rule() const override { return EndRule::kExitedDuring; }

 private:
  std::string_view reply_type_;
  std::string id_;
  std::size_t logs_ = 0;
};

// inspect_variables (spec §3.9): stricter still, only a few log lines may
// come before the answer.
class VariablesWait final : public FrameWait {
 public:
  VariablesWait(ArmedReply* bound, std::string request_id)
      : FrameWait("variable inspection", bound), id_(std::move(request_id)) {}
  Verdict judge(FrameKind kind, const Json& frame) override;
  Result<Json> accept(Json frame) override;
  EndRule end_rule() const override { return EndRule::kExitedDuring; }

 private:
  std::string id_;
  std::size_t logs_ = 0;
};

// A request a worker may not know, followed by a fence every worker answers
// (kernel/worker_request.cpp): the fence's answer ends the wait, with the
// request's reply if it came first, else null (unsupported).
class FencedWait final : public FrameWait {
 public:
  FencedWait(std::string what, ArmedReply* bound, std::string reply_type, std::string request_id,
             std::string fence_id)
      : FrameWait(std::move(what), bound),
        reply_type_(std::move(reply_type)),
        id_(std::move(request_id)),
        fence_id_(std::move(fence_id)) {}
  Verdict judge(FrameKind kind, const Json& frame) override;
  Result<Json> accept(Json frame) override;
  Error desync_error() const override {
    return make_error(ErrorCode::kProtocol, "kernel protocol desynchronized during a request");
  }

 private:
  std::string reply_type_;
  std::string id_;
  std::string fence_id_;
  std::optional<Json> answer_;
  std::size_t skipped_ = 0;
};

// stdout_request: a cell's kept stdout, asked for again after its declared
// stream did not add up. Answers the text as a JSON string.
class StdoutResendWait final : public FrameWait {
 public:
  StdoutResendWait(ArmedReply* bound, std::string cell_id)
      : FrameWait("stdout resend", bound), cell_id_(std::move(cell_id)) {}
  Verdict judge(FrameKind kind, const Json& frame) override;
  Result<Json> accept(Json frame) override;

 private:
  std::string cell_id_;
};

}  // namespace o4s::kernel
