// Completion and help requests (complete / inspect): idle-only transactions
// like variable inspection, answered by the worker without running user code.
#include <mutex>

#include "base/random_id.h"
#include "kernel/idle_waits.h"
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"

namespace o4s::kernel {

Result<Json> KernelManager::idle_request(Json request, std::string_view reply_type,
                                         const std::string& what) {
  auto transaction = idle_transaction();
  if (!transaction) return std::move(transaction).error();
  const std::string request_id = std::string(proto::frame_type(request)) + "-" + uuid4();
  request["id"] = request_id;
  ArmedReply bound = arm_reply_bound();
  ReplyWait wait(what, &bound, reply_type, request_id);
  return send_and_await(request, wait);
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
