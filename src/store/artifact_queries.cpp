// Artifact lookups and small updates (spec host.md §7.5, §8.1-8.3). Scope is
// always the exact (project, root frame) pair: one session never sees
// another's versions.
#include <sys/stat.h>

#include "store/sqlite_util.h"
#include "store/store.h"

namespace o4s::store {

namespace {

// How many newer in-scope versions version_for_path compares by inode. It
// runs on every open() in a cell, so it must stay cheap; a session rarely
// has this many versions, and older ones lose to a newer exact match anyway.
constexpr int kIdentityCandidates = 256;

bool same_file(const struct stat& a, const std::string& path) {
  struct stat b {};
  return ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

Status require_changed(sqlite3* db, const std::string& what, const std::string& id) {
  if (sqlite3_changes(db) == 0) {
    return make_error(ErrorCode::kInvalidArgument, "no " + what + " '" + id + "'");
  }
  return {};
}

}  // namespace

Result<bool> Store::version_in_scope(const std::string& version_id,
                                     const std::string& root_frame_id,
                                     const std::string& project_id) {
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(
      db_,
      "SELECT 1 FROM artifact_versions v JOIN artifacts a ON a.artifact_id = v.artifact_id "
      "WHERE v.version_id = ? AND a.root_frame_id = ? AND a.project_id = ?");
  if (!stmt) return std::move(stmt).error();
  return stmt->bind_all(version_id, root_frame_id, project_id).step();
}

Result<std::optional<std::string>> Store::version_for_path(const std::string& path,
                                                           const std::string& root_frame_id,
                                                           const std::string& project_id) {
  std::lock_guard lock(mutex_);
  auto exact =
      sql::Statement::prepare(db_,
                              "SELECT v.version_id, v.created_at, v.rowid FROM artifact_versions v "
                              "JOIN artifacts a ON a.artifact_id = v.artifact_id "
                              "WHERE v.path = ? AND a.root_frame_id = ? AND a.project_id = ? "
                              "ORDER BY v.created_at DESC, v.rowid DESC LIMIT 1");
  if (!exact) return std::move(exact).error();
  auto found = exact->bind_all(path, root_frame_id, project_id).step();
  if (!found) return std::move(found).error();
  std::optional<std::string> best;
  std::int64_t after_created = -1;
  std::int64_t after_rowid = -1;
  if (found.value()) {
    best = exact->text(0);
    after_created = exact->int64(1);
    after_rowid = exact->int64(2);
  }

  // A newer version stored under another spelling of the same file (a
  // symlinked directory, a hard link) is the file's current version.
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return best;
  auto newer = sql::Statement::prepare(
      db_,
      "SELECT v.version_id, v.path FROM artifact_versions v "
      "JOIN artifacts a ON a.artifact_id = v.artifact_id "
      "WHERE a.root_frame_id = ? AND a.project_id = ? AND (v.created_at, v.rowid) > (?, ?) "
      "AND v.path != ? ORDER BY v.created_at DESC, v.rowid DESC LIMIT ?");
  if (!newer) return std::move(newer).error();
  newer->bind_all(root_frame_id, project_id, after_created, after_rowid, path, kIdentityCandidates);
  while (true) {
    auto row = newer->step();
    if (!row) return std::move(row).error();
    if (!row.value()) return best;
    if (same_file(target, newer->text(1))) return std::optional<std::string>(newer->text(0));
  }
}

Result<std::optional<std::string>> Store::version_snapshot_path(const std::string& version_id) {
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(
      db_, "SELECT snapshot_path FROM artifact_versions WHERE version_id = ?");
  if (!stmt) return std::move(stmt).error();
  auto row = stmt->bind_all(version_id).step();
  if (!row) return std::move(row).error();
  if (!row.value()) {
    return make_error(ErrorCode::kInvalidArgument, "no artifact version '" + version_id + "'");
  }
  return stmt->optional_text(0);
}

Result<Store::StoredBytes> Store::artifact_bytes_under(const std::string& directory,
                                                       const std::string& checksum) {
  std::lock_guard lock(mutex_);
  const std::string prefix = directory + "/";
  auto stmt =
      sql::Statement::prepare(db_,
                              "SELECT COALESCE(SUM(size), 0), COALESCE(MAX(checksum = ?), 0) FROM ("
                              "SELECT checksum, MAX(size_bytes) AS size FROM artifact_versions "
                              "WHERE substr(path, 1, ?) = ? GROUP BY checksum)");
  if (!stmt) return std::move(stmt).error();
  auto row = stmt->bind_all(checksum, static_cast<std::int64_t>(prefix.size()), prefix).step();
  if (!row) return std::move(row).error();
  StoredBytes stored;
  if (row.value()) {
    stored.bytes = stmt->int64(0);
    stored.has_checksum = stmt->int64(1) != 0;
  }
  return stored;
}

Status Store::bind_version_snapshot(const std::string& version_id,
                                    const std::string& snapshot_path) {
  if (snapshot_path.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "snapshot path is empty");
  }
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(
      db_, "UPDATE artifact_versions SET snapshot_path = ? WHERE version_id = ?");
  if (!stmt) return std::move(stmt).error();
  if (auto status = stmt->bind_all(snapshot_path, version_id).run(); !status) return status;
  return require_changed(db_, "artifact version", version_id);
}

Status Store::set_artifact_priority(const std::string& artifact_id, int priority) {
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(
      db_, "UPDATE artifacts SET priority = ?, updated_at = ? WHERE artifact_id = ?");
  if (!stmt) return std::move(stmt).error();
  if (auto status = stmt->bind_all(priority, timestamp(), artifact_id).run(); !status)
    return status;
  return require_changed(db_, "artifact", artifact_id);
}

Result<std::optional<std::string>> Store::artifact_of_version(const std::string& version_id) {
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(
      db_, "SELECT artifact_id FROM artifact_versions WHERE version_id = ?");
  if (!stmt) return std::move(stmt).error();
  auto row = stmt->bind_all(version_id).step();
  if (!row) return std::move(row).error();
  if (!row.value()) return std::optional<std::string>();
  return std::optional<std::string>(stmt->text(0));
}

}  // namespace o4s::store
