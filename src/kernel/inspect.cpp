// The variable inspection transaction (spec kernel.md §3.9): idle-only, and
// it fails Busy rather than become a second frame reader.
#include <mutex>

#include "base/random_id.h"
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"
#include "proto/limits.h"

namespace o4s::kernel {

Result<Json> KernelManager::inspect_variables(long long limit) {
  if (limit < proto::kInspectLimitMin || limit > proto::kInspectLimitMax) {
    return make_error(ErrorCode::kInvalidArgument,
                      "variable inspection limit must be between 1 and 500");
  }
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");
  std::unique_lock transaction(transaction_, std::try_to_lock);
  if (!transaction.owns_lock()) return make_error(ErrorCode::kBusy, "kernel worker is busy");
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");

  const std::string request_id = "variables-" + uuid4();
  const std::string what = "variable inspection";
  ArmedReply bound = arm_reply_bound();
  Status sent =
      send(Json{{"type", proto::frame::kInspectVariables}, {"id", request_id}, {"limit", limit}});
  if (!sent) return bound.finish() ? unanswered_error(what) : std::move(sent).error();

  std::size_t logs = 0;
  for (;;) {
    auto next = readline();
    if (!next) return bound.finish() ? unanswered_error(what) : std::move(next).error();
    if (!next->has_value()) {
      if (bound.finish()) return unanswered_error(what);
      return make_error(ErrorCode::kWorkerExited,
                        "kernel worker exited during variable inspection");
    }
    Json& frame = **next;
    std::string_view type = proto::frame_type(frame);
    if (type == proto::frame::kLog && ++logs <= proto::kLogFramesSkippedLimit) continue;
    if (bound.finish()) return unanswered_error(what);
    if (type != proto::frame::kVariablesResponse ||
        proto::frame_string(frame, "id") != request_id) {
      return make_error(ErrorCode::kProtocol,
                        "kernel protocol desynchronized during variable inspection");
    }
    auto error = frame.find("error");
    if (error != frame.end() && !error->is_null()) {
      std::string text = error->is_string() ? error->get<std::string>() : error->dump();
      return make_error(ErrorCode::kProtocol, "variable inspection failed: " + text);
    }
    auto variables = frame.find("variables");
    if (variables == frame.end() || !variables->is_array()) {
      return make_error(ErrorCode::kProtocol, "invalid variables response from kernel worker");
    }
    return std::move(frame);
  }
}

}  // namespace o4s::kernel
