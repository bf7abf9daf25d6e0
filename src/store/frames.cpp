// Frames (spec host.md §7.2): a conversation is a tree of frames whose root
// names the session; the root's project is the session's project.
#include <array>
#include <string_view>

#include "store/sqlite_util.h"
#include "store/store.h"
#include "store/store_internal.h"

namespace o4s::store {

namespace {

constexpr std::array<std::string_view, 3> kKinds = {"turn", "delegate", "compaction_fork"};
constexpr std::array<std::string_view, 4> kStatuses = {"processing", "done", "failed",
                                                       "awaiting_user_response"};

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& values, const std::string& value) {
  for (std::string_view candidate : values) {
    if (candidate == value) return true;
  }
  return false;
}

Status validate(const NewFrame& frame) {
  if (!one_of(kKinds, frame.kind)) {
    return make_error(ErrorCode::kInvalidArgument, "invalid frame kind '" + frame.kind +
                                                       "' (expected turn, delegate or "
                                                       "compaction_fork)");
  }
  if (!one_of(kStatuses, frame.status)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "invalid frame status '" + frame.status +
                          "' (expected processing, done, failed or awaiting_user_response)");
  }
  if (frame.project_id.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "frame project_id is empty");
  }
  if (frame.depth < 0) return make_error(ErrorCode::kInvalidArgument, "frame depth is negative");
  return {};
}

}  // namespace

namespace internal {

Result<std::optional<FrameScope>> lookup_frame_scope(sqlite3* db, const std::string& frame_id) {
  auto stmt = sql::Statement::prepare(
      db,
      "SELECT f.root_frame_id, f.project_id, r.project_id FROM frames f "
      "LEFT JOIN frames r ON r.frame_id = coalesce(f.root_frame_id, f.frame_id) "
      "WHERE f.frame_id = ?");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(frame_id);
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  if (!row.value()) return std::optional<FrameScope>();
  FrameScope scope;
  scope.frame_id = frame_id;
  scope.root_frame_id = stmt->optional_text(0).value_or(frame_id);
  // The root frame's project wins over a descendant's own.
  scope.project_id = stmt->is_null(2) ? stmt->text(1) : stmt->text(2);
  return std::optional<FrameScope>(std::move(scope));
}

}  // namespace internal

Result<std::string> Store::new_frame(const NewFrame& frame) {
  if (auto status = validate(frame); !status) return std::move(status).error();
  std::lock_guard lock(mutex_);
  std::string frame_id = new_id("f-");
  std::string root = frame_id;
  std::string project = frame.project_id;
  // A child inherits its parent's session; a missing parent leaves the frame
  // its own root (the parent id is still recorded as given).
  if (frame.parent_id && !frame.parent_id->empty()) {
    auto parent = internal::lookup_frame_scope(db_, *frame.parent_id);
    if (!parent) return std::move(parent).error();
    if (parent.value()) {
      root = parent.value()->root_frame_id;
      project = parent.value()->project_id;
    }
  }
  std::int64_t now = timestamp();
  auto stmt = sql::Statement::prepare(
      db_,
      "INSERT INTO frames(frame_id, parent_id, project_id, root_frame_id, kind, name, model, "
      "status, depth, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(frame_id, frame.parent_id, project, root, frame.kind, frame.name, frame.model,
                 frame.status, frame.depth, now, now);
  if (auto status = stmt->run(); !status) return std::move(status).error();
  return frame_id;
}

Result<std::optional<Json>> Store::get_frame(const std::string& frame_id) {
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(db_, "SELECT * FROM frames WHERE frame_id = ?");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(frame_id);
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  if (!row.value()) return std::optional<Json>();
  return std::optional<Json>(stmt->row_json());
}

Result<FrameScope> Store::resolve_frame_scope(const std::optional<std::string>& frame_id,
                                              const std::string& fallback_project) {
  FrameScope fallback{frame_id.value_or(""), frame_id.value_or(""), fallback_project};
  if (!frame_id || frame_id->empty()) return fallback;
  std::lock_guard lock(mutex_);
  auto scope = internal::lookup_frame_scope(db_, *frame_id);
  if (!scope) return std::move(scope).error();
  if (!scope.value()) return fallback;
  return std::move(*scope.value());
}

}  // namespace o4s::store
