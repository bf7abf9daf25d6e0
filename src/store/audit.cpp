// The host-call audit log (spec host.md §7.4): one row per dispatched call.
#include <exception>

#include "base/sha256.h"
#include "store/audit_preview.h"
#include "store/sqlite_util.h"
#include "store/store.h"

namespace o4s::store {

Status Store::log_host_call(const HostCallRecord& record) {
  if (record.method.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "host call method is empty");
  }
  if (audit::is_derivable_method(record.method)) return {};

  std::string args_preview = audit::kRedactedArgs;
  std::string result_preview = audit::kRedactedResult;
  std::optional<std::string> result_digest;
  if (!audit::is_secret_method(record.method)) {
    args_preview = audit::args_preview(record.args);
    result_preview = audit::result_preview(record.result);
    try {
      result_digest = sha256_hex(audit::canonical_json(record.result));
    } catch (const std::exception&) {
      // Out of memory on a huge result: the row still records the call.
      result_digest.reset();
    }
  }
  Json keys = record.resource_keys;

  std::lock_guard lock(mutex_);
  // created_at is strictly increasing across the file, not just now(): rows
  // logged in the same millisecond must still sort in call order, which is
  // how the log is read (ORDER BY created_at). The INSERT runs under the
  // database write lock, so other writers of the same file cannot interleave.
  auto stmt = sql::Statement::prepare(
      db_,
      "INSERT INTO host_call_log(call_id, frame_id, action_group_id, action_id, "
      "permission_decision_id, method, args_preview, result_preview, result_digest, "
      "side_effect_class, resource_keys, ok, summary, decided_by, outcome, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "max(?, coalesce((SELECT max(created_at) FROM host_call_log), 0) + 1))");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(new_id("hc-"), record.frame_id, record.action_group_id, record.action_id,
                 record.permission_decision_id, record.method, args_preview, result_preview,
                 result_digest, record.side_effect_class,
                 keys.dump(-1, ' ', false, Json::error_handler_t::replace), record.ok ? 1 : 0,
                 record.summary, record.decided_by, record.outcome, timestamp());
  return stmt->run();
}

}  // namespace o4s::store
