// Recording a cell's output file as an artifact version with its lineage
// (spec host.md §7.5). One transaction: a crash leaves either the whole
// record or none of it.
#include <algorithm>
#include <vector>

#include "store/sqlite_util.h"
#include "store/store.h"
#include "store/store_internal.h"

namespace o4s::store {

namespace {

struct ArtifactScope {
  std::optional<std::string> root_frame_id;  // null: recorded outside any session
  std::string project_id;
};

struct Placement {
  std::string artifact_id;
  std::string version_id;
};

std::optional<std::string> non_empty(const std::optional<std::string>& value) {
  if (value && value->empty()) return std::nullopt;
  return value;
}

Status validate(const CellArtifact& artifact) {
  auto invalid = [](const std::string& message) {
    return make_error(ErrorCode::kInvalidArgument, "record_cell_artifact: " + message);
  };
  if (artifact.path.empty()) return invalid("path is empty");
  if (artifact.filename.empty()) return invalid("filename is empty");
  if (artifact.checksum.empty()) return invalid("checksum is empty");
  if (artifact.size_bytes < 0) return invalid("size_bytes is negative");
  const std::string& policy = artifact.reuse_policy;
  if (policy != "any" && policy != "provisional" && policy != "never") {
    return invalid("invalid reuse_policy '" + policy + "' (expected any, provisional or never)");
  }
  return {};
}

// The producing frame decides the scope; explicit values may only agree.
Result<ArtifactScope> resolve_scope(sqlite3* db, const CellArtifact& artifact) {
  auto root = non_empty(artifact.root_frame_id);
  auto project = non_empty(artifact.project_id);
  auto frame_id = non_empty(artifact.frame_id);
  if (!frame_id) return ArtifactScope{root, project.value_or("default")};
  auto frame = internal::lookup_frame_scope(db, *frame_id);
  if (!frame) return std::move(frame).error();
  if (!frame.value()) return ArtifactScope{root ? root : frame_id, project.value_or("default")};
  const FrameScope& scope = *frame.value();
  if (root && *root != scope.root_frame_id) {
    return make_error(ErrorCode::kInvalidArgument, "root_frame_id conflicts with producer frame");
  }
  if (project && *project != scope.project_id) {
    return make_error(ErrorCode::kInvalidArgument, "project_id conflicts with producer frame");
  }
  return ArtifactScope{scope.root_frame_id, scope.project_id};
}

// Distinct, non-empty, in the caller's order; each must name a version, so
// an edge can never point at nothing.
Result<std::vector<std::string>> existing_inputs(sqlite3* db, const std::vector<std::string>& ids) {
  std::vector<std::string> inputs;
  for (const std::string& id : ids) {
    if (id.empty() || std::find(inputs.begin(), inputs.end(), id) != inputs.end()) continue;
    inputs.push_back(id);
  }
  auto stmt = sql::Statement::prepare(db, "SELECT 1 FROM artifact_versions WHERE version_id = ?");
  if (!stmt) return std::move(stmt).error();
  for (const std::string& id : inputs) {
    stmt->reset();
    auto row = stmt->bind_all(id).step();
    if (!row) return std::move(row).error();
    if (!row.value()) {
      return make_error(ErrorCode::kInvalidArgument, "no artifact version '" + id + "'");
    }
  }
  return inputs;
}

std::optional<std::string> source_text(const Json& source) {
  if (source.is_null()) return std::nullopt;
  return source.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The same cell wrote the same bytes to the same file and that version is
// still its artifact's head: the new record is the old one again.
Result<std::optional<Placement>> reusable_version(sqlite3* db, const CellArtifact& artifact,
                                                  const ArtifactScope& scope) {
  auto cell = non_empty(artifact.producing_cell_id);
  if (!cell || artifact.reuse_policy == "never") return std::optional<Placement>();
  auto stmt = sql::Statement::prepare(
      db,
      "SELECT v.version_id, v.artifact_id, v.snapshot_path IS NOT NULL "
      "FROM artifact_versions v JOIN artifacts a ON a.artifact_id = v.artifact_id "
      "WHERE v.producing_cell_id = ? AND v.checksum = ? AND v.path = ? AND v.filename = ? "
      "AND a.latest_version_id = v.version_id AND a.project_id = ? AND a.root_frame_id IS ? "
      "ORDER BY v.created_at DESC, v.rowid DESC LIMIT 1");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(*cell, artifact.checksum, artifact.path, artifact.filename, scope.project_id,
                 scope.root_frame_id);
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  if (!row.value()) return std::optional<Placement>();
  // "provisional" (save_artifact) only adopts a version no snapshot is bound to.
  bool has_snapshot = stmt->int64(2) != 0;
  if (artifact.reuse_policy == "provisional" && has_snapshot) return std::optional<Placement>();
  return std::optional<Placement>(Placement{stmt->text(1), stmt->text(0)});
}

Status refresh_version(sqlite3* db, const CellArtifact& artifact, const std::string& version_id) {
  auto stmt = sql::Statement::prepare(
      db,
      "UPDATE artifact_versions SET content_type = coalesce(?, content_type), size_bytes = ?, "
      "snapshot_path = coalesce(snapshot_path, ?), frame_id = coalesce(frame_id, ?), "
      "source = coalesce(?, source) WHERE version_id = ?");
  if (!stmt) return std::move(stmt).error();
  return stmt
      ->bind_all(artifact.content_type, artifact.size_bytes, non_empty(artifact.snapshot_path),
                 non_empty(artifact.frame_id), source_text(artifact.source), version_id)
      .run();
}

// The newest artifact of that name in the session, or a new one.
Result<std::string> artifact_for(sqlite3* db, const CellArtifact& artifact,
                                 const ArtifactScope& scope, std::int64_t now) {
  auto find = sql::Statement::prepare(
      db,
      "SELECT artifact_id FROM artifacts WHERE project_id = ? AND root_frame_id IS ? "
      "AND filename = ? ORDER BY created_at DESC, rowid DESC LIMIT 1");
  if (!find) return std::move(find).error();
  auto row = find->bind_all(scope.project_id, scope.root_frame_id, artifact.filename).step();
  if (!row) return std::move(row).error();
  if (row.value()) return find->text(0);

  std::string artifact_id = new_id("a-");
  auto insert = sql::Statement::prepare(
      db,
      "INSERT INTO artifacts(artifact_id, project_id, root_frame_id, filename, content_type, "
      "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return std::move(insert).error();
  insert->bind_all(artifact_id, scope.project_id, scope.root_frame_id, artifact.filename,
                   artifact.content_type, now, now);
  if (auto status = insert->run(); !status) return std::move(status).error();
  return artifact_id;
}

Result<std::string> insert_version(sqlite3* db, const CellArtifact& artifact,
                                   const std::string& artifact_id, std::int64_t now) {
  std::string version_id = new_id("v-");
  auto stmt = sql::Statement::prepare(
      db,
      "INSERT INTO artifact_versions(version_id, artifact_id, filename, content_type, size_bytes, "
      "checksum, path, snapshot_path, producing_cell_id, frame_id, created_at, source) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(version_id, artifact_id, artifact.filename, artifact.content_type,
                 artifact.size_bytes, artifact.checksum, artifact.path,
                 non_empty(artifact.snapshot_path), non_empty(artifact.producing_cell_id),
                 non_empty(artifact.frame_id), now, source_text(artifact.source));
  if (auto status = stmt->run(); !status) return std::move(status).error();
  return version_id;
}

Status point_artifact_at(sqlite3* db, const CellArtifact& artifact, const Placement& placement,
                         std::int64_t now) {
  auto stmt = sql::Statement::prepare(
      db,
      "UPDATE artifacts SET filename = ?, content_type = coalesce(?, content_type), "
      "latest_version_id = ?, updated_at = ? WHERE artifact_id = ?");
  if (!stmt) return std::move(stmt).error();
  return stmt
      ->bind_all(artifact.filename, artifact.content_type, placement.version_id, now,
                 placement.artifact_id)
      .run();
}

// One edge per input; an edge the version already has is not doubled (a
// reused version may be recorded again with the same inputs).
Status add_lineage(sqlite3* db, const CellArtifact& artifact, const std::string& version_id,
                   const std::vector<std::string>& inputs, std::int64_t now) {
  for (const std::string& input : inputs) {
    if (input == version_id) continue;
    auto stmt = sql::Statement::prepare(
        db,
        "INSERT INTO lineage_edges(edge_id, input_version_id, output_version_id, "
        "producing_cell_id, frame_id, created_at) SELECT ?1, ?2, ?3, ?4, ?5, ?6 "
        "WHERE NOT EXISTS (SELECT 1 FROM lineage_edges "
        "WHERE input_version_id = ?2 AND output_version_id = ?3)");
    if (!stmt) return std::move(stmt).error();
    stmt->bind_all(new_id("e-"), input, version_id, non_empty(artifact.producing_cell_id),
                   non_empty(artifact.frame_id), now);
    if (auto status = stmt->run(); !status) return status;
  }
  return {};
}

Result<Json> describe(sqlite3* db, const Placement& placement) {
  auto stmt = sql::Statement::prepare(
      db,
      "SELECT filename, path, content_type, size_bytes, checksum, created_at "
      "FROM artifact_versions WHERE version_id = ?");
  if (!stmt) return std::move(stmt).error();
  auto row = stmt->bind_all(placement.version_id).step();
  if (!row) return std::move(row).error();
  if (!row.value()) return make_error(ErrorCode::kSystem, "artifact version vanished mid-record");
  Json record = stmt->row_json();
  record["artifact_id"] = placement.artifact_id;
  record["version_id"] = placement.version_id;
  return record;
}

}  // namespace

Result<Json> Store::record_cell_artifact(const CellArtifact& artifact) {
  if (auto status = validate(artifact); !status) return std::move(status).error();
  std::lock_guard lock(mutex_);
  auto txn = sql::Transaction::begin(db_);
  if (!txn) return std::move(txn).error();

  auto scope = resolve_scope(db_, artifact);
  if (!scope) return std::move(scope).error();
  auto inputs = existing_inputs(db_, artifact.input_version_ids);
  if (!inputs) return std::move(inputs).error();
  std::int64_t now = timestamp();

  auto reuse = reusable_version(db_, artifact, scope.value());
  if (!reuse) return std::move(reuse).error();
  Placement placement;
  if (reuse.value()) {
    placement = *reuse.value();
    if (auto status = refresh_version(db_, artifact, placement.version_id); !status) {
      return std::move(status).error();
    }
  } else {
    auto artifact_id = artifact_for(db_, artifact, scope.value(), now);
    if (!artifact_id) return std::move(artifact_id).error();
    auto version_id = insert_version(db_, artifact, artifact_id.value(), now);
    if (!version_id) return std::move(version_id).error();
    placement = {artifact_id.value(), version_id.value()};
  }
  if (auto status = point_artifact_at(db_, artifact, placement, now); !status) {
    return std::move(status).error();
  }
  if (auto status = add_lineage(db_, artifact, placement.version_id, inputs.value(), now);
      !status) {
    return std::move(status).error();
  }
  auto record = describe(db_, placement);
  if (!record) return record;
  if (auto status = txn->commit(); !status) return std::move(status).error();
  return record;
}

}  // namespace o4s::store
