// The host-call audit log (spec host.md §7.4): one row per dispatched call.
#include <exception>

#include "base/sha256.h"
#include "store/audit_preview.h"
#include "store/sqlite_util.h"
#include "store/store.h"

namespace o4s::store {

namespace {

// A row's columns as logged: previews (redacted for secret-bearing
// methods) and the result's digest, computed outside the store's lock.
struct PreparedRow {
  const HostCallRecord* record = nullptr;
  std::string args_preview = audit::kRedactedArgs;
  std::string result_preview = audit::kRedactedResult;
  std::optional<std::string> result_digest;
};

// nullopt for a row not logged (a derivable method).
std::optional<PreparedRow> prepare_row(const HostCallRecord& record) {
  if (audit::is_derivable_method(record.method)) return std::nullopt;
  PreparedRow row;
  row.record = &record;
  if (!audit::is_secret_method(record.method)) {
    row.args_preview = audit::args_preview(record.args);
    row.result_preview = audit::result_preview(record.result);
    try {
      row.result_digest = sha256_hex(audit::canonical_json(record.result));
    } catch (const std::exception&) {
      // Out of memory on a huge result: the row still records the call.
      row.result_digest.reset();
    }
  }
  return row;
}

// created_at is strictly increasing across the file, not just now(): rows
// logged in the same millisecond must still sort in call order, which is
// how the log is read (ORDER BY created_at). The INSERT runs under the
// database write lock, so other writers of the same file cannot interleave.
Status insert_row(sqlite3* db, const PreparedRow& row, std::int64_t now) {
  const HostCallRecord& record = *row.record;
  auto stmt = sql::Statement::prepare(
      db,
      "INSERT INTO host_call_log(call_id, frame_id, action_group_id, action_id, "
      "permission_decision_id, method, args_preview, result_preview, result_digest, "
      "side_effect_class, resource_keys, ok, summary, decided_by, outcome, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "max(?, coalesce((SELECT max(created_at) FROM host_call_log), 0) + 1))");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(new_id("hc-"), record.frame_id, record.action_group_id, record.action_id,
                 record.permission_decision_id, record.method, row.args_preview, row.result_preview,
                 row.result_digest, record.side_effect_class,
                 Json(record.resource_keys).dump(-1, ' ', false, Json::error_handler_t::replace),
                 record.ok ? 1 : 0, record.summary, record.decided_by, record.outcome, now);
  return stmt->run();
}

}  // namespace

Status Store::log_host_call(const HostCallRecord& record) {
  if (record.method.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "host call method is empty");
  }
  auto row = prepare_row(record);
  if (!row) return {};
  std::lock_guard lock(mutex_);
  return insert_row(db_, *row, timestamp());
}

Status Store::log_host_calls(const std::vector<HostCallRecord>& records) {
  std::vector<PreparedRow> rows;
  rows.reserve(records.size());
  for (const auto& record : records) {
    if (record.method.empty()) continue;  // one bad row never costs the batch
    if (auto row = prepare_row(record)) rows.push_back(std::move(*row));
  }
  if (rows.empty()) return {};
  std::lock_guard lock(mutex_);
  // One commit (one fsync) for the whole batch.
  auto txn = sql::Transaction::begin(db_);
  if (!txn) return std::move(txn).error();
  for (const auto& row : rows) {
    if (Status inserted = insert_row(db_, row, timestamp()); !inserted) return inserted;
  }
  return txn->commit();
}

}  // namespace o4s::store
