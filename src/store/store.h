// The SQLite store (spec host.md §7): frames, permission rules and requests,
// settings, the host-call audit log, artifacts, versions and lineage. The
// only place sqlite3.h appears. One connection per Store, every operation
// under one mutex and committed immediately, so it is safe to share between
// threads (the server's many request threads included).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

struct sqlite3;

namespace o4s::store {

using Json = nlohmann::json;

struct FrameScope {
  std::string frame_id;
  std::string root_frame_id;
  std::string project_id;
};

struct NewFrame {
  std::optional<std::string> parent_id;
  std::string project_id = "default";
  std::string kind = "turn";
  std::optional<std::string> name;
  std::optional<std::string> model;
  int depth = 0;
  std::string status = "processing";
};

struct PermissionRule {
  std::string rule_id;
  std::string scope;     // global | project | conversation
  std::string scope_id;  // "" | project id | root frame id
  std::string tool;      // host method, "bash", or "*"
  std::string pattern;   // glob, default "*"
  std::string decision;  // allow | ask | deny
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

// The global rules seeded for a fresh store (spec §4.3). The host's method
// table declares them (host/host_methods.cpp); the store only writes them.
struct DefaultRule {
  std::string tool;
  std::string pattern;
  std::string decision;
  int since = 1;  // the seed version that introduced the rule
};
struct DefaultRules {
  std::vector<DefaultRule> rules;
  int version = 1;  // the newest `since`, recorded as perm_seed_version
};

struct PermissionRequest {
  std::optional<std::string> root_frame_id;
  std::optional<std::string> frame_id;
  std::optional<std::string> project_id;
  std::optional<std::string> action_group_id;
  std::optional<std::string> action_id;
  std::optional<std::string> tool_call_id;
  std::string tool;
  std::string target;
  std::optional<std::string> side_effect_class;
  std::vector<std::string> resource_keys;
  Json payload = Json::object();
  std::int64_t ttl_ms = 900'000;
};

struct PermissionResolution {
  std::string state;  // allowed | denied | timed_out | cancelled
  std::optional<std::string> message;
  std::optional<std::string> resolution_context;  // live_thread | unattended | ...
  std::optional<std::string> scope;
  std::optional<std::string> pattern;
};

struct HostCallRecord {
  std::string method;
  Json args = Json::array();  // decoded (snake_case) args
  bool ok = true;
  std::optional<std::string> frame_id;
  Json result;  // null when there is none
  std::optional<std::string> action_group_id;
  std::optional<std::string> action_id;
  std::optional<std::string> permission_decision_id;
  std::optional<std::string> side_effect_class;
  std::vector<std::string> resource_keys;
  // For a person reading the log (already bounded and redacted by the
  // caller): what the call was about (a command, a path), who decided
  // (rule, user, unattended, secret-file gate; none when ungated), and how
  // it ended ("ok", "denied: ...", "error: ...", "exit 0").
  std::optional<std::string> summary;
  std::optional<std::string> decided_by;
  std::optional<std::string> outcome;
};

struct CellArtifact {
  std::string path;
  std::string filename;
  std::optional<std::string> content_type;
  std::int64_t size_bytes = 0;
  std::string checksum;
  std::optional<std::string> producing_cell_id;
  std::optional<std::string> frame_id;
  std::optional<std::string> root_frame_id;
  std::optional<std::string> project_id;
  std::optional<std::string> snapshot_path;
  std::vector<std::string> input_version_ids;
  Json source;                       // null or retrieval provenance
  std::string reuse_policy = "any";  // any | provisional | never
};

// Milliseconds since the epoch (the store's timestamps).
std::int64_t now_ms();

class Store {
 public:
  // Where the store's timestamps come from: now_ms, or in tests a clock
  // they step, so two rows get distinct timestamps without a sleep.
  using Clock = std::function<std::int64_t()>;

  // Opens (creating the parent directory 0700 and the file 0600) and brings
  // the schema to the current version. Rollback journal, not WAL.
  static Result<std::shared_ptr<Store>> open(const std::string& path, Clock clock = now_ms);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const;

  // Frames (§7.2). Ids are "f-<hex12>".
  Result<std::string> new_frame(const NewFrame& frame);
  Result<std::optional<Json>> get_frame(const std::string& frame_id);
  // Unknown or absent id: the id itself as root and the fallback project.
  Result<FrameScope> resolve_frame_scope(const std::optional<std::string>& frame_id,
                                         const std::string& fallback_project = "default");

  // Permission rules (§7.3). Upsert on (scope, scope_id, tool, pattern);
  // returns the (kept) rule id "perm_<hex12>". Bad scope/decision: kInvalidArgument.
  Result<std::string> set_permission_rule(const std::string& scope, const std::string& scope_id,
                                          const std::string& tool, const std::string& pattern,
                                          const std::string& decision);
  Status delete_permission_rule(const std::string& rule_id);
  // All global rules + the project's + the conversation's (each optional).
  Result<std::vector<PermissionRule>> rules_for(const std::optional<std::string>& root_frame_id,
                                                const std::optional<std::string>& project_id);
  // Default global rules of §4.3, seeded once per version (settings
  // perm_seeded / perm_seed_version); existing rows are left alone.
  Status seed_default_permission_rules(const DefaultRules& defaults, bool force = false);

  // Durable permission requests (§4.4-4.6): "perm-<hex12>", state pending.
  Result<std::string> create_permission_request(const PermissionRequest& request);
  // Terminal states are immutable: the same state again is a no-op, a
  // different one is kInvalidArgument.
  Status resolve_permission_request(const std::string& decision_id,
                                    const PermissionResolution& resolution);
  Result<std::optional<Json>> get_permission_request(const std::string& decision_id);

  // Settings.
  Result<std::optional<std::string>> get_setting(const std::string& key);
  Status set_setting(const std::string& key, const std::string& value);

  // The audit log (§7.4): one row per call; derivable methods are skipped,
  // secret-bearing ones get redacted previews and no digest.
  Status log_host_call(const HostCallRecord& record);
  // Many rows in one transaction (one commit): a writer that queues rows
  // (the MCP server's) keeps up under a flood. Rows with no method are
  // skipped; a failure rolls the batch back.
  Status log_host_calls(const std::vector<HostCallRecord>& records);

  // Artifacts (§7.5). Returns {artifact_id, version_id, filename, path,
  // content_type, size_bytes, checksum, created_at}.
  Result<Json> record_cell_artifact(const CellArtifact& artifact);
  // True when the version exists and its artifact is in exactly this scope.
  Result<bool> version_in_scope(const std::string& version_id, const std::string& root_frame_id,
                                const std::string& project_id);
  Result<std::optional<std::string>> version_for_path(const std::string& path,
                                                      const std::string& root_frame_id,
                                                      const std::string& project_id);
  Result<std::optional<std::string>> version_snapshot_path(const std::string& version_id);
  // Bytes of distinct contents recorded from files under `directory` (each
  // checksum counted once), and whether `checksum` is among them: what a new
  // snapshot of that content would add to the directory's quota.
  struct StoredBytes {
    std::int64_t bytes = 0;
    bool has_checksum = false;
  };
  Result<StoredBytes> artifact_bytes_under(const std::string& directory,
                                           const std::string& checksum);
  Status bind_version_snapshot(const std::string& version_id, const std::string& snapshot_path);
  Status set_artifact_priority(const std::string& artifact_id, int priority);
  Result<std::optional<std::string>> artifact_of_version(const std::string& version_id);

 private:
  Store(std::string path, sqlite3* db, Clock clock);
  std::int64_t timestamp() const { return clock_(); }
  std::string path_;
  sqlite3* db_;
  Clock clock_;
  // Plain, not recursive: no public method calls another while holding it
  // (shared steps run on db_ as internal:: helpers, store_internal.h), so a
  // second lock on one thread would be a bug, not a need.
  mutable std::mutex mutex_;
};

// "<prefix><12 random hex>", e.g. new_id("f-").
std::string new_id(const std::string& prefix);

}  // namespace o4s::store
