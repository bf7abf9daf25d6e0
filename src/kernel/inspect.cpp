// The variable inspection transaction (spec kernel.md §3.9): idle-only, and
// it fails Busy rather than become a second frame reader.
#include "base/random_id.h"
#include "kernel/idle_waits.h"
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"
#include "proto/limits.h"

namespace o4s::kernel {

Result<Json> KernelManager::inspect_variables(long long limit) {
  if (limit < proto::kInspectLimitMin || limit > proto::kInspectLimitMax) {
    return make_error(ErrorCode::kInvalidArgument,
                      "variable inspection limit must be between 1 and 500");
  }
  auto transaction = idle_transaction();
  if (!transaction) return std::move(transaction).error();
  const std::string request_id = "variables-" + uuid4();
  ArmedReply bound = arm_reply_bound();
  VariablesWait wait(&bound, request_id);
  return send_and_await(
      Json{{"type", proto::frame::kInspectVariables}, {"id", request_id}, {"limit", limit}}, wait);
}

}  // namespace o4s::kernel
