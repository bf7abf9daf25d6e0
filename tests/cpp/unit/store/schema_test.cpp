// Opening: file modes, journal mode, durability, visibility to a second
// connection, and upgrading files written before the schema was versioned.
#include "store/schema.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "store_fixture.h"

namespace o4s::store::testing {
namespace {

mode_t mode_of(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

using SchemaTest = StoreTest;

TEST_F(SchemaTest, FreshFileIsAtTheCurrentVersionWithEveryTable) {
  EXPECT_EQ(store().schema_version(), kSchemaVersion);
  RawDb raw(db_path());
  for (const char* table : {"frames", "permission_rules", "permission_requests", "settings",
                            "host_call_log", "artifacts", "artifact_versions", "lineage_edges"}) {
    EXPECT_EQ(raw.integer(std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                      "AND name = '") +
                          table + "'"),
              1)
        << table;
  }
  EXPECT_EQ(raw.integer("PRAGMA user_version"), kSchemaVersion);
}

TEST_F(SchemaTest, CreatedDirectoryIs0700AndDatabaseIs0600) {
  EXPECT_EQ(mode_of(dir_.file("state")), 0700u);
  EXPECT_EQ(mode_of(db_path()), 0600u);
}

TEST(SchemaOpenTest, ModesHoldUnderAPermissiveUmask) {
  ScratchDir dir;
  mode_t old = ::umask(0);
  auto store = Store::open(dir.file("a/b/db.sqlite"));
  ::umask(old);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(mode_of(dir.file("a")), 0700u);
  EXPECT_EQ(mode_of(dir.file("a/b")), 0700u);
  EXPECT_EQ(mode_of(dir.file("a/b/db.sqlite")), 0600u);
}

TEST(SchemaOpenTest, TightensAnExistingFileButNotAnExistingDirectory) {
  ScratchDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  std::string path = dir.file("db.sqlite");
  { RawDb raw(path); }
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(mode_of(path), 0600u);
  EXPECT_EQ(mode_of(dir.path()), 0755u);
}

TEST_F(SchemaTest, UsesTheRollbackJournalNotWal) {
  RawDb raw(db_path());
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "delete");
}

TEST(SchemaOpenTest, SwitchesAWalFileBackToTheRollbackJournal) {
  ScratchDir dir;
  std::string path = dir.file("db.sqlite");
  {
    RawDb raw(path);
    EXPECT_EQ(raw.text("PRAGMA journal_mode = WAL"), "wal");
  }
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  RawDb raw(path);
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "delete");
}

TEST(SchemaOpenTest, EmptyPathIsInvalidArgument) {
  auto store = Store::open("");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
}

TEST(SchemaOpenTest, ParentThatIsAFileIsASystemError) {
  ScratchDir dir;
  { RawDb raw(dir.file("plain")); }
  auto store = Store::open(dir.file("plain/db.sqlite"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kSystem);
}

TEST_F(SchemaTest, WritesAreVisibleToASecondConnectionAtOnce) {
  // Opened before the writes, like the acceptance suite's sqlite3 connection.
  RawDb raw(db_path());
  HostCallRecord call;
  call.method = "read_file";
  ASSERT_TRUE(store().log_host_call(call).ok());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), 1);
  ASSERT_TRUE(store().set_permission_rule("global", "", "bash", "ls *", "allow").ok());
  EXPECT_EQ(raw.text("SELECT decision FROM permission_rules WHERE tool = 'bash'"), "allow");
  // The reader holding no lock in between, the store can keep writing.
  ASSERT_TRUE(store().log_host_call(call).ok());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), 2);
}

TEST_F(SchemaTest, ARowSurvivesTheWriterBeingKilled) {
  std::string path = db_path();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A fresh connection in the child: nothing is shared with the parent's.
    auto opened = Store::open(path);
    HostCallRecord call;
    call.method = "bash";
    if (!opened.ok() || !opened.value()->log_host_call(call).ok()) ::_exit(3);
    ::raise(SIGKILL);
    ::_exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  RawDb raw(path);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log WHERE method = 'bash'"), 1);
}

TEST_F(SchemaTest, ReopeningKeepsTheData) {
  auto rule = store().set_permission_rule("global", "", "glob", "*", "deny");
  ASSERT_TRUE(rule.ok());
  store_.reset();
  auto reopened = Store::open(db_path());
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  auto rules = reopened.value()->rules_for(std::nullopt, std::nullopt);
  ASSERT_TRUE(rules.ok());
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_EQ(rules->front().rule_id, rule.value());
}

TEST(SchemaOpenTest, ManyStoresOpeningOneFreshFileAtOnceAllSucceed) {
  ScratchDir dir;
  std::string path = dir.file("db.sqlite");
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (std::size_t i = 0; i < ok.size(); ++i) {
    threads.emplace_back([&, i] {
      auto store = Store::open(path);
      ok[i] = store.ok() && store.value()->schema_version() == kSchemaVersion ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  for (int value : ok) EXPECT_EQ(value, 1);
}

TEST(SchemaOpenTest, RefusesAFileFromANewerBuild) {
  ScratchDir dir;
  std::string path = dir.file("db.sqlite");
  {
    RawDb raw(path);
    raw.exec("CREATE TABLE frames(frame_id TEXT PRIMARY KEY); PRAGMA user_version = 99");
  }
  auto store = Store::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(store.error().message.find("99"), std::string::npos);
}

// A file from before versioning: user_version 0, tables lacking later
// columns, no unique key on permission rules (with a duplicate), no lineage.
void write_unversioned_file(const std::string& path) {
  RawDb raw(path);
  raw.exec(R"sql(
    CREATE TABLE frames(frame_id TEXT PRIMARY KEY, parent_id TEXT,
      project_id TEXT NOT NULL DEFAULT 'default', root_frame_id TEXT, kind TEXT, name TEXT,
      status TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    INSERT INTO frames VALUES ('f-old', NULL, 'proj', 'f-old', 'turn', 'old', 'done', 1, 1);
    CREATE TABLE permission_rules(rule_id TEXT PRIMARY KEY, scope TEXT NOT NULL,
      scope_id TEXT NOT NULL DEFAULT '', tool TEXT NOT NULL, pattern TEXT NOT NULL DEFAULT '*',
      decision TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    INSERT INTO permission_rules VALUES ('perm_older', 'global', '', 'bash', '*', 'deny', 1, 1);
    INSERT INTO permission_rules VALUES ('perm_newer', 'global', '', 'bash', '*', 'allow', 2, 2);
    CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT, updated_at INTEGER NOT NULL);
    CREATE TABLE host_call_log(call_id TEXT PRIMARY KEY, frame_id TEXT, method TEXT NOT NULL,
      args_preview TEXT, result_preview TEXT, ok INTEGER NOT NULL DEFAULT 1,
      created_at INTEGER NOT NULL);
    INSERT INTO host_call_log VALUES ('hc-old', 'f-old', 'glob', '[]', '{}', 1, 5);
    CREATE TABLE artifacts(artifact_id TEXT PRIMARY KEY, project_id TEXT NOT NULL DEFAULT 'default',
      root_frame_id TEXT, filename TEXT NOT NULL, latest_version_id TEXT,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    INSERT INTO artifacts VALUES ('a-old', 'proj', 'f-old', 'x.csv', 'v-old', 1, 1);
    CREATE TABLE artifact_versions(version_id TEXT PRIMARY KEY, artifact_id TEXT NOT NULL,
      filename TEXT, size_bytes INTEGER, checksum TEXT, path TEXT NOT NULL,
      producing_cell_id TEXT, frame_id TEXT, created_at INTEGER NOT NULL);
    INSERT INTO artifact_versions VALUES ('v-old', 'a-old', 'x.csv', 3, 'abc', '/w/x.csv',
      'cell-1', 'f-old', 1);
  )sql");
}

TEST(SchemaMigrationTest, UpgradesAnUnversionedFileKeepingItsRows) {
  ScratchDir dir;
  std::string path = dir.file("db.sqlite");
  write_unversioned_file(path);

  auto opened = Store::open(path);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = *opened.value();
  EXPECT_EQ(store.schema_version(), kSchemaVersion);

  RawDb raw(path);
  // Old rows kept; the added NOT NULL columns got their defaults.
  EXPECT_EQ(raw.text("SELECT name FROM frames WHERE frame_id = 'f-old'"), "old");
  EXPECT_EQ(raw.integer("SELECT depth FROM frames WHERE frame_id = 'f-old'"), 0);
  EXPECT_EQ(raw.integer("SELECT priority FROM artifacts WHERE artifact_id = 'a-old'"), 0);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), 1);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM pragma_table_info('host_call_log') "
                        "WHERE name IN ('result_digest', 'resource_keys', 'side_effect_class')"),
            3);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM pragma_table_info('artifact_versions') "
                        "WHERE name IN ('source', 'snapshot_path', 'env_snapshot_id')"),
            3);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'lineage_edges'"), 1);
  // The duplicate rule collapsed to its newest row, and upserts now work.
  EXPECT_EQ(raw.integer("SELECT count(*) FROM permission_rules WHERE tool = 'bash'"), 1);
  auto kept = store.set_permission_rule("global", "", "bash", "*", "ask");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(kept.value(), "perm_newer");

  // The old rows take part in the new operations.
  auto scope = store.resolve_frame_scope(std::string("f-old"));
  ASSERT_TRUE(scope.ok());
  EXPECT_EQ(scope->project_id, "proj");
  auto found = store.version_for_path("/w/x.csv", "f-old", "proj");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found.value(), std::optional<std::string>("v-old"));
  CellArtifact next;
  next.path = "/w/y.csv";
  next.filename = "y.csv";
  next.checksum = "def";
  next.frame_id = "f-old";
  next.input_version_ids = {"v-old"};
  auto recorded = store.record_cell_artifact(next);
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  EXPECT_TRUE(store.set_artifact_priority("a-old", 2).ok());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM lineage_edges WHERE input_version_id = 'v-old'"), 1);

  // Reopening takes the fast path and changes nothing.
  opened = Store::open(path);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_EQ(raw.integer("SELECT count(*) FROM permission_rules"), 1);
}

TEST(SchemaMigrationTest, AnEmptyUnversionedFileGetsTheCurrentSchema) {
  ScratchDir dir;
  std::string path = dir.file("db.sqlite");
  { RawDb raw(path); }
  auto opened = Store::open(path);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  RawDb raw(path);
  EXPECT_EQ(raw.integer("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                        "AND name = 'permission_rules_key'"),
            1);
}

}  // namespace
}  // namespace o4s::store::testing
