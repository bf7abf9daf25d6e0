// Durable permission requests (spec host.md §4.4-4.6, §7.3): created pending,
// resolved once to a terminal state that never changes afterwards.
#include <array>
#include <string_view>

#include "store/sqlite_util.h"
#include "store/store.h"

namespace o4s::store {

namespace {

constexpr std::array<std::string_view, 4> kTerminalStates = {"allowed", "denied", "timed_out",
                                                             "cancelled"};
constexpr std::array<std::string_view, 4> kScopes = {"once", "conversation", "project", "global"};
constexpr std::array<std::string_view, 4> kContexts = {"live_thread", "unattended", "after_restart",
                                                       "expired"};

bool one_of(const std::array<std::string_view, 4>& values, const std::string& value) {
  for (std::string_view candidate : values) {
    if (candidate == value) return true;
  }
  return false;
}

Status validate(const PermissionResolution& resolution) {
  if (!one_of(kTerminalStates, resolution.state)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "invalid permission request state '" + resolution.state +
                          "' (expected allowed, denied, timed_out or cancelled)");
  }
  if (resolution.scope && !one_of(kScopes, *resolution.scope)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "invalid permission resolution scope '" + *resolution.scope +
                          "' (expected once, conversation, project or global)");
  }
  if (resolution.resolution_context && !one_of(kContexts, *resolution.resolution_context)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "invalid resolution context '" + *resolution.resolution_context +
                          "' (expected live_thread, unattended, after_restart or expired)");
  }
  return {};
}

std::string compact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Columns stored as JSON text come back as JSON; a corrupt value stays text.
void parse_json_column(Json& row, const char* column) {
  auto it = row.find(column);
  if (it == row.end() || !it->is_string()) return;
  Json parsed = Json::parse(it->get<std::string>(), nullptr, false);
  if (!parsed.is_discarded()) *it = std::move(parsed);
}

}  // namespace

Result<std::string> Store::create_permission_request(const PermissionRequest& request) {
  if (request.tool.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "permission request tool is empty");
  }
  if (request.ttl_ms <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "permission request ttl must be positive");
  }
  std::string decision_id = new_id("perm-");
  // The UI payload names its own request; the caller cannot know the id yet.
  Json payload = request.payload;
  if (payload.is_object()) payload["decision_id"] = decision_id;
  Json keys = request.resource_keys;

  std::lock_guard lock(mutex_);
  std::int64_t now = timestamp();
  auto stmt = sql::Statement::prepare(
      db_,
      "INSERT INTO permission_requests(decision_id, root_frame_id, frame_id, project_id, "
      "action_group_id, action_id, tool_call_id, tool, target, side_effect_class, resource_keys, "
      "payload, state, created_at, expires_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(decision_id, request.root_frame_id, request.frame_id, request.project_id,
                 request.action_group_id, request.action_id, request.tool_call_id, request.tool,
                 request.target, request.side_effect_class, compact(keys), compact(payload), now,
                 now + request.ttl_ms);
  if (auto status = stmt->run(); !status) return std::move(status).error();
  return decision_id;
}

Status Store::resolve_permission_request(const std::string& decision_id,
                                         const PermissionResolution& resolution) {
  if (auto status = validate(resolution); !status) return status;
  std::lock_guard lock(mutex_);
  auto txn = sql::Transaction::begin(db_);
  if (!txn) return std::move(txn).error();
  auto current =
      sql::Statement::prepare(db_, "SELECT state FROM permission_requests WHERE decision_id = ?");
  if (!current) return std::move(current).error();
  current->bind_all(decision_id);
  auto row = current->step();
  if (!row) return std::move(row).error();
  if (!row.value()) {
    return make_error(ErrorCode::kInvalidArgument, "no permission request '" + decision_id + "'");
  }
  std::string state = current->text(0);
  if (state != "pending") {
    // Terminal rows are immutable; repeating the same outcome is harmless.
    if (state == resolution.state) return txn->commit();
    return make_error(ErrorCode::kInvalidArgument,
                      "permission request '" + decision_id + "' is already " + state);
  }
  auto update = sql::Statement::prepare(
      db_,
      "UPDATE permission_requests SET state = ?, message = ?, resolution_context = ?, "
      "scope = ?, pattern = ?, resolved_at = ? WHERE decision_id = ? AND state = 'pending'");
  if (!update) return std::move(update).error();
  update->bind_all(resolution.state, resolution.message, resolution.resolution_context,
                   resolution.scope, resolution.pattern, timestamp(), decision_id);
  if (auto status = update->run(); !status) return status;
  return txn->commit();
}

Result<std::optional<Json>> Store::get_permission_request(const std::string& decision_id) {
  std::lock_guard lock(mutex_);
  auto stmt =
      sql::Statement::prepare(db_, "SELECT * FROM permission_requests WHERE decision_id = ?");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(decision_id);
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  if (!row.value()) return std::optional<Json>();
  Json request = stmt->row_json();
  parse_json_column(request, "resource_keys");
  parse_json_column(request, "payload");
  if (request["continuation_required"].is_number_integer()) {
    request["continuation_required"] = request["continuation_required"].get<std::int64_t>() != 0;
  }
  return std::optional<Json>(std::move(request));
}

}  // namespace o4s::store
