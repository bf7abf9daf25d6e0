// Completion and help requests (complete / inspect): idle-only transactions
// like variable inspection, answered by the worker without running user code.
#include <mutex>

#include "base/random_id.h"
#include "kernel/cell_io.h"
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"
#include "proto/limits.h"

namespace o4s::kernel {

Result<Json> KernelManager::idle_request(Json request, std::string_view reply_type,
                                         const std::string& what) {
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");
  std::unique_lock transaction(transaction_, std::try_to_lock);
  if (!transaction.owns_lock()) return make_error(ErrorCode::kBusy, "kernel worker is busy");
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");

  const std::string request_id = std::string(proto::frame_type(request)) + "-" + uuid4();
  request["id"] = request_id;
  ArmedReply bound = arm_reply_bound();
  Status sent = send(request);
  if (!sent) return bound.finish() ? unanswered_error(what) : std::move(sent).error();

  std::size_t logs = 0;
  for (;;) {
    auto next = readline();
    if (!next) return bound.finish() ? unanswered_error(what) : std::move(next).error();
    if (!next->has_value()) {
      if (bound.finish()) return unanswered_error(what);
      return make_error(ErrorCode::kWorkerExited, "kernel worker exited during " + what);
    }
    Json& frame = **next;
    std::string_view type = proto::frame_type(frame);
    if (type == reply_type && proto::frame_string(frame, "id") == request_id) {
      if (bound.finish()) return unanswered_error(what);
      auto error = frame.find("error");
      if (error != frame.end() && !error->is_null()) {
        std::string text = error->is_string() ? error->get<std::string>() : error->dump();
        return make_error(ErrorCode::kProtocol, what + " failed: " + text);
      }
      frame.erase("type");
      frame.erase("id");
      return std::move(frame);
    }
    // A thread a finished cell left running may still print, display, ask
    // for input or call the host between cells; none of it is the answer.
    if (type == proto::frame::kLog) {
      if (++logs <= proto::kLogFramesSkippedLimit) {
        std::string msg = proto::frame_string(frame, "msg");
        if (!msg.empty()) remember_log(msg);
      }
    } else if (type == proto::frame::kStdoutChunk) {
      stale_stdout_chunks_.fetch_add(1);
    } else if (type == proto::frame::kDisplay || type == proto::frame::kClearOutput) {
      stale_displays_.fetch_add(1);
    } else if (type == proto::frame::kInputRequest) {
      Status answered = send(input_reply(frame, nullptr, false));
      if (!answered) return std::move(answered).error();
    } else if (type == proto::frame::kHostCall) {
      if (bound.pause()) return unanswered_error(what);
      Status serviced = service_host_call(frame);
      if (!serviced) return std::move(serviced).error();
      bound.rearm();
    } else {
      return make_error(ErrorCode::kProtocol, "kernel protocol desynchronized during " + what);
    }
  }
}

Result<Json> KernelManager::complete(const std::string& code, long long cursor) {
  Result<Json> reply =
      idle_request(Json{{"type", proto::frame::kComplete}, {"code", code}, {"cursor", cursor}},
                   proto::frame::kCompleteReply, "completion");
  if (!reply) return reply;
  const Json& body = reply.value();
  auto matches = body.find("matches");
  auto start = body.find("cursor_start");
  auto end = body.find("cursor_end");
  if (matches == body.end() || !matches->is_array() || start == body.end() ||
      !start->is_number_integer() || end == body.end() || !end->is_number_integer()) {
    return make_error(ErrorCode::kProtocol, "invalid completion reply from kernel worker");
  }
  for (const Json& match : *matches) {
    if (!match.is_string()) {
      return make_error(ErrorCode::kProtocol, "invalid completion reply from kernel worker");
    }
  }
  return reply;
}

Result<Json> KernelManager::inspect_code(const std::string& code, long long cursor,
                                         int detail_level) {
  Result<Json> reply = idle_request(Json{{"type", proto::frame::kInspect},
                                         {"code", code},
                                         {"cursor", cursor},
                                         {"detail_level", detail_level}},
                                    proto::frame::kInspectReply, "code inspection");
  if (!reply) return reply;
  const Json& body = reply.value();
  auto found = body.find("found");
  auto data = body.find("data");
  if (found == body.end() || !found->is_boolean() || data == body.end() || !data->is_object()) {
    return make_error(ErrorCode::kProtocol, "invalid inspection reply from kernel worker");
  }
  return reply;
}

}  // namespace o4s::kernel
