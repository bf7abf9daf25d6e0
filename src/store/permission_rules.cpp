// Standing permission rules (spec host.md §4.2, §4.3, §7.3). Resolution
// itself lives in host/permission_policy; the store only keeps the rows.
#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

#include "store/sqlite_util.h"
#include "store/store.h"
#include "store/store_internal.h"

namespace o4s::store {

namespace {

// The seed version that made skills_edit's default "ask" (it was "allow").
constexpr int kSkillsEditAskSince = 4;

Status validate_rule(const std::string& scope, const std::string& scope_id, const std::string& tool,
                     const std::string& decision) {
  if (scope != "global" && scope != "project" && scope != "conversation") {
    return make_error(ErrorCode::kInvalidArgument, "invalid permission scope '" + scope +
                                                       "' (expected global, project or "
                                                       "conversation)");
  }
  if (decision != "allow" && decision != "ask" && decision != "deny") {
    return make_error(ErrorCode::kInvalidArgument, "invalid permission decision '" + decision +
                                                       "' (expected allow, ask or deny)");
  }
  if (scope == "global" && !scope_id.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "a global permission rule takes no scope_id");
  }
  if (scope != "global" && scope_id.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "a " + scope + " permission rule needs a scope_id");
  }
  if (tool.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "permission rule tool is empty (use '*')");
  }
  return {};
}

// Keeps the rule id of an existing row; updates its decision and updated_at
// when `overwrite` (user upserts, forced reseeds), else leaves it untouched
// (seeding never overrides what a user chose).
Result<std::string> upsert_rule(sqlite3* db, const std::string& scope, const std::string& scope_id,
                                const std::string& tool, const std::string& pattern,
                                const std::string& decision, bool overwrite, std::int64_t now) {
  std::string sql =
      "INSERT INTO permission_rules(rule_id, scope, scope_id, tool, pattern, decision, "
      "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT(scope, scope_id, tool, pattern) DO UPDATE SET ";
  // A no-op update of the conflicting row still lets RETURNING name its id.
  sql += overwrite ? "decision = excluded.decision, updated_at = excluded.updated_at "
                   : "rule_id = rule_id ";
  sql += "RETURNING rule_id";
  auto stmt = sql::Statement::prepare(db, sql);
  if (!stmt) return std::move(stmt).error();
  stmt->bind_all(new_id("perm_"), scope, scope_id, tool, pattern, decision, now, now);
  auto row = stmt->step();
  if (!row) return std::move(row).error();
  if (!row.value()) return make_error(ErrorCode::kSystem, "permission rule upsert returned no id");
  std::string rule_id = stmt->text(0);
  if (auto status = stmt->run(); !status) return std::move(status).error();
  return rule_id;
}

int stored_seed_version(const std::optional<std::string>& seeded,
                        const std::optional<std::string>& version) {
  if (seeded.value_or("") != "1") return 0;
  // Seeded before versions were recorded: the original table.
  if (!version) return 1;
  try {
    return std::stoi(*version);
  } catch (const std::exception&) {
    return 1;
  }
}

}  // namespace

Result<std::string> Store::set_permission_rule(const std::string& scope,
                                               const std::string& scope_id, const std::string& tool,
                                               const std::string& pattern,
                                               const std::string& decision) {
  if (auto status = validate_rule(scope, scope_id, tool, decision); !status) {
    return std::move(status).error();
  }
  std::lock_guard lock(mutex_);
  // An empty pattern matches everything, exactly like "*": store one spelling
  // so the two cannot coexist as separate rules.
  return upsert_rule(db_, scope, scope_id, tool, pattern.empty() ? "*" : pattern, decision, true,
                     timestamp());
}

Status Store::delete_permission_rule(const std::string& rule_id) {
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(db_, "DELETE FROM permission_rules WHERE rule_id = ?");
  if (!stmt) return std::move(stmt).error();
  if (auto status = stmt->bind_all(rule_id).run(); !status) return status;
  if (sqlite3_changes(db_) == 0) {
    return make_error(ErrorCode::kInvalidArgument, "no permission rule '" + rule_id + "'");
  }
  return {};
}

Result<std::vector<PermissionRule>> Store::rules_for(
    const std::optional<std::string>& root_frame_id, const std::optional<std::string>& project_id) {
  std::lock_guard lock(mutex_);
  auto stmt = sql::Statement::prepare(
      db_,
      "SELECT rule_id, scope, scope_id, tool, pattern, decision, created_at, updated_at "
      "FROM permission_rules WHERE scope = 'global' "
      "OR (scope = 'project' AND scope_id = ?1) OR (scope = 'conversation' AND scope_id = ?2) "
      "ORDER BY updated_at, rowid");
  if (!stmt) return std::move(stmt).error();
  // NULL never equals a scope_id, so an absent project or root selects none.
  stmt->bind_all(project_id, root_frame_id);
  std::vector<PermissionRule> rules;
  while (true) {
    auto row = stmt->step();
    if (!row) return std::move(row).error();
    if (!row.value()) return rules;
    rules.push_back({stmt->text(0), stmt->text(1), stmt->text(2), stmt->text(3), stmt->text(4),
                     stmt->text(5), stmt->int64(6), stmt->int64(7)});
  }
}

Status Store::seed_default_permission_rules(const DefaultRules& defaults, bool force) {
  std::lock_guard lock(mutex_);
  // Every dispatcher construction calls this: read first, so the common
  // already-seeded case takes no write lock.
  auto seeded = internal::read_setting(db_, "perm_seeded");
  if (!seeded) return std::move(seeded).error();
  auto version = internal::read_setting(db_, "perm_seed_version");
  if (!version) return std::move(version).error();
  if (!force && stored_seed_version(seeded.value(), version.value()) >= defaults.version) {
    return {};
  }

  auto txn = sql::Transaction::begin(db_);
  if (!txn) return std::move(txn).error();
  // Re-read under the write lock: another process may have seeded meanwhile.
  seeded = internal::read_setting(db_, "perm_seeded");
  if (!seeded) return std::move(seeded).error();
  version = internal::read_setting(db_, "perm_seed_version");
  if (!version) return std::move(version).error();
  int stored = stored_seed_version(seeded.value(), version.value());
  if (!force && stored >= defaults.version) return txn->commit();

  for (const DefaultRule& rule : defaults.rules) {
    if (!force && rule.since <= stored) continue;
    auto id =
        upsert_rule(db_, "global", "", rule.tool, rule.pattern, rule.decision, force, timestamp());
    if (!id) return std::move(id).error();
  }
  if (!force && stored >= 1 && stored < kSkillsEditAskSince) {
    // v4: skills_edit went from allow to ask; an upgraded store's legacy
    // global allow is migrated once (later user changes are left alone
    // because the stored version then reads 4).
    auto stmt = sql::Statement::prepare(
        db_,
        "UPDATE permission_rules SET decision = 'ask', updated_at = ? WHERE scope = 'global' "
        "AND scope_id = '' AND tool = 'skills_edit' AND pattern = '*' AND decision = 'allow'");
    if (!stmt) return std::move(stmt).error();
    if (auto status = stmt->bind_all(timestamp()).run(); !status) return status;
  }
  std::int64_t now = timestamp();
  if (auto status = internal::write_setting(db_, "perm_seeded", "1", now); !status) return status;
  // A newer build's marker is never lowered by a forced reseed here.
  int seeded_version = std::max(stored, defaults.version);
  if (auto status =
          internal::write_setting(db_, "perm_seed_version", std::to_string(seeded_version), now);
      !status) {
    return status;
  }
  return txn->commit();
}

}  // namespace o4s::store
