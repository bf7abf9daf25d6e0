#include "store/schema.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite_util.h"

namespace o4s::store {

namespace {

// The current tables (spec host.md §7.2-7.5). Timestamps are epoch ms and
// booleans 0/1. Kept apart from the indexes: an old table must gain its
// missing columns before an index over them can be created.
constexpr std::string_view kTables = R"sql(
CREATE TABLE IF NOT EXISTS frames (
  frame_id TEXT PRIMARY KEY,
  parent_id TEXT,
  project_id TEXT NOT NULL DEFAULT 'default',
  root_frame_id TEXT,
  kind TEXT,
  name TEXT,
  task_summary TEXT,
  model TEXT,
  effort TEXT,
  status TEXT,
  runtime_env TEXT,
  folder_id TEXT,
  depth INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER,
  output_tokens INTEGER,
  cost_usd REAL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS permission_rules (
  rule_id TEXT PRIMARY KEY,
  scope TEXT NOT NULL CHECK (scope IN ('global', 'project', 'conversation')),
  scope_id TEXT NOT NULL DEFAULT '',
  tool TEXT NOT NULL,
  pattern TEXT NOT NULL DEFAULT '*',
  decision TEXT NOT NULL CHECK (decision IN ('allow', 'ask', 'deny')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS permission_requests (
  decision_id TEXT PRIMARY KEY,
  root_frame_id TEXT,
  frame_id TEXT,
  project_id TEXT,
  action_group_id TEXT,
  action_id TEXT,
  tool_call_id TEXT,
  tool TEXT NOT NULL,
  target TEXT NOT NULL DEFAULT '',
  side_effect_class TEXT,
  resource_keys TEXT,
  payload TEXT,
  state TEXT NOT NULL DEFAULT 'pending'
    CHECK (state IN ('pending', 'allowed', 'denied', 'timed_out', 'cancelled')),
  scope TEXT,
  pattern TEXT,
  message TEXT,
  resolution_context TEXT,
  continuation_required INTEGER NOT NULL DEFAULT 0,
  continuation_expires_at INTEGER,
  continuation_consumed_at INTEGER,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  resolved_at INTEGER
);
CREATE TABLE IF NOT EXISTS settings (
  key TEXT PRIMARY KEY,
  value TEXT,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS host_call_log (
  call_id TEXT PRIMARY KEY,
  frame_id TEXT,
  action_group_id TEXT,
  action_id TEXT,
  permission_decision_id TEXT,
  method TEXT NOT NULL,
  args_preview TEXT,
  result_preview TEXT,
  result_digest TEXT,
  side_effect_class TEXT,
  resource_keys TEXT,
  ok INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  summary TEXT,
  decided_by TEXT,
  outcome TEXT
);
CREATE TABLE IF NOT EXISTS artifacts (
  artifact_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL DEFAULT 'default',
  root_frame_id TEXT,
  filename TEXT NOT NULL,
  content_type TEXT,
  is_user_upload INTEGER NOT NULL DEFAULT 0,
  priority INTEGER NOT NULL DEFAULT 0,
  latest_version_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS artifact_versions (
  version_id TEXT PRIMARY KEY,
  artifact_id TEXT NOT NULL REFERENCES artifacts(artifact_id),
  filename TEXT,
  content_type TEXT,
  size_bytes INTEGER,
  checksum TEXT,
  path TEXT NOT NULL,
  snapshot_path TEXT,
  producing_cell_id TEXT,
  frame_id TEXT,
  created_at INTEGER NOT NULL,
  source TEXT,
  env_snapshot_id TEXT
);
CREATE TABLE IF NOT EXISTS lineage_edges (
  edge_id TEXT PRIMARY KEY,
  input_version_id TEXT NOT NULL REFERENCES artifact_versions(version_id),
  output_version_id TEXT NOT NULL REFERENCES artifact_versions(version_id),
  producing_cell_id TEXT,
  frame_id TEXT,
  created_at INTEGER NOT NULL
);
)sql";

constexpr std::string_view kIndexes = R"sql(
CREATE INDEX IF NOT EXISTS frames_parent ON frames(parent_id);
CREATE INDEX IF NOT EXISTS frames_project ON frames(project_id);
CREATE UNIQUE INDEX IF NOT EXISTS permission_rules_key
  ON permission_rules(scope, scope_id, tool, pattern);
CREATE INDEX IF NOT EXISTS permission_requests_root
  ON permission_requests(root_frame_id, state, created_at);
CREATE INDEX IF NOT EXISTS host_call_log_created ON host_call_log(created_at);
CREATE INDEX IF NOT EXISTS host_call_log_frame ON host_call_log(frame_id, created_at);
CREATE INDEX IF NOT EXISTS artifacts_scope ON artifacts(project_id, root_frame_id, filename);
CREATE INDEX IF NOT EXISTS artifact_versions_artifact ON artifact_versions(artifact_id);
CREATE INDEX IF NOT EXISTS artifact_versions_path ON artifact_versions(path);
CREATE INDEX IF NOT EXISTS artifact_versions_cell
  ON artifact_versions(producing_cell_id, checksum);
CREATE INDEX IF NOT EXISTS lineage_edges_output ON lineage_edges(output_version_id);
CREATE INDEX IF NOT EXISTS lineage_edges_input ON lineage_edges(input_version_id);
)sql";

// Version 1: files written before the store was versioned (user_version 0
// with tables present). Their permission_rules may lack the uniqueness the
// upsert relies on, so keep the newest row of each key before the unique
// index is built.
Status step_1_dedupe_rules(sqlite3* db) {
  auto has_table = sql::Statement::prepare(
      db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'permission_rules'");
  if (!has_table) return std::move(has_table).error();
  auto found = has_table->step();
  if (!found) return std::move(found).error();
  if (!found.value()) return {};
  return sql::exec(db, R"sql(
    DELETE FROM permission_rules WHERE rowid NOT IN (
      SELECT (SELECT r2.rowid FROM permission_rules r2
              WHERE r2.scope = r.scope AND r2.scope_id IS r.scope_id
                AND r2.tool = r.tool AND r2.pattern IS r.pattern
              ORDER BY r2.updated_at DESC, r2.rowid DESC LIMIT 1)
      FROM permission_rules r GROUP BY r.scope, r.scope_id, r.tool, r.pattern))sql");
}

// Version 2: the audit log reads like a log (what the call was about, who
// decided, the outcome). The columns are added by add_missing_columns; rows
// written before stay without them (the reader shows their previews).
Status step_2_audit_story(sqlite3*) { return {}; }

struct Step {
  int version;
  Status (*apply)(sqlite3*);
};

// Data changes an upgrade needs beyond adding what is missing. Later versions
// append here; a step must tolerate tables that lack later columns.
constexpr Step kSteps[] = {
    {1, step_1_dedupe_rules},
    {2, step_2_audit_story},
};

struct ColumnInfo {
  std::string name;
  std::string type;
  bool not_null = false;
  std::optional<std::string> default_sql;
  bool primary_key = false;
};

Result<std::vector<std::string>> table_names(sqlite3* db) {
  auto stmt = sql::Statement::prepare(
      db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  if (!stmt) return std::move(stmt).error();
  std::vector<std::string> names;
  while (true) {
    auto row = stmt->step();
    if (!row) return std::move(row).error();
    if (!row.value()) return names;
    names.push_back(stmt->text(0));
  }
}

Result<std::vector<ColumnInfo>> columns_of(sqlite3* db, const std::string& table) {
  auto stmt = sql::Statement::prepare(
      db, "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)");
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(table);
  std::vector<ColumnInfo> columns;
  while (true) {
    auto row = stmt->step();
    if (!row) return std::move(row).error();
    if (!row.value()) return columns;
    columns.push_back({stmt->text(0), stmt->text(1), stmt->int64(2) != 0, stmt->optional_text(3),
                       stmt->int64(4) != 0});
  }
}

std::string quoted(const std::string& identifier) {
  std::string out = "\"";
  for (char c : identifier) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// ALTER TABLE ADD COLUMN cannot add a NOT NULL column without a default, so
// old rows get a neutral one (0 or '').
std::string add_column_sql(const std::string& table, const ColumnInfo& column) {
  std::string sql =
      "ALTER TABLE " + quoted(table) + " ADD COLUMN " + quoted(column.name) + " " + column.type;
  std::optional<std::string> fallback = column.default_sql;
  if (column.not_null && !fallback) fallback = column.type == "TEXT" ? "''" : "0";
  if (column.not_null) sql += " NOT NULL";
  if (fallback) sql += " DEFAULT " + *fallback;
  return sql;
}

// The current columns, read from a scratch in-memory database built from
// kTables, so the DDL text stays the one description of the schema.
Status add_missing_columns(sqlite3* db) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> reference(raw, sqlite3_close_v2);
  if (rc != SQLITE_OK) return sql::sqlite_error(raw, rc, "open reference schema");
  if (auto status = sql::exec(reference.get(), kTables); !status) return status;
  auto tables = table_names(reference.get());
  if (!tables) return std::move(tables).error();
  for (const std::string& table : tables.value()) {
    auto wanted = columns_of(reference.get(), table);
    if (!wanted) return std::move(wanted).error();
    auto present = columns_of(db, table);
    if (!present) return std::move(present).error();
    std::set<std::string> have;
    for (const ColumnInfo& column : present.value()) have.insert(column.name);
    for (const ColumnInfo& column : wanted.value()) {
      if (have.count(column.name) != 0) continue;
      if (column.primary_key) {
        return make_error(ErrorCode::kUnsupported,
                          "store schema: table " + table + " lacks its key column " + column.name);
      }
      if (auto status = sql::exec(db, add_column_sql(table, column)); !status) return status;
    }
  }
  return {};
}

Status set_user_version(sqlite3* db, int version) {
  return sql::exec(db, "PRAGMA user_version = " + std::to_string(version));
}

Status upgrade(sqlite3* db, int from) {
  for (const Step& step : kSteps) {
    if (step.version <= from) continue;
    if (auto status = step.apply(db); !status) return status;
  }
  if (auto status = sql::exec(db, kTables); !status) return status;
  if (auto status = add_missing_columns(db); !status) return status;
  return sql::exec(db, kIndexes);
}

}  // namespace

Result<int> user_version(sqlite3* db) {
  auto stmt = sql::Statement::prepare(db, "PRAGMA user_version");
  if (!stmt) return std::move(stmt).error();
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  return row.value() ? static_cast<int>(stmt->int64(0)) : 0;
}

Status migrate(sqlite3* db) {
  // Fast path without the write lock: most opens find the schema current.
  auto seen = user_version(db);
  if (!seen) return std::move(seen).error();
  if (seen.value() == kSchemaVersion) return {};

  // Another process may be migrating the same file: decide under the lock.
  auto txn = sql::Transaction::begin(db);
  if (!txn) return std::move(txn).error();
  auto version = user_version(db);
  if (!version) return std::move(version).error();
  if (version.value() > kSchemaVersion) {
    return make_error(ErrorCode::kUnsupported,
                      "store schema version " + std::to_string(version.value()) +
                          " is newer than this build's " + std::to_string(kSchemaVersion));
  }
  if (version.value() < kSchemaVersion) {
    auto tables = table_names(db);
    if (!tables) return std::move(tables).error();
    Status status = tables->empty() ? sql::exec(db, std::string(kTables) + std::string(kIndexes))
                                    : upgrade(db, version.value());
    if (!status) return status;
    if (auto set = set_user_version(db, kSchemaVersion); !set) return set;
  }
  return txn->commit();
}

}  // namespace o4s::store
