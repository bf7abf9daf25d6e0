// Artifacts: new version vs reuse, lineage, scope isolation, path lookup.
#include <unistd.h>

#include <fstream>
#include <regex>

#include "store_fixture.h"

namespace o4s::store::testing {
namespace {

class ArtifactsTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    NewFrame root;
    root.project_id = "proj";
    session_ = store().new_frame(root).value();
    NewFrame child;
    child.parent_id = session_;
    child_ = store().new_frame(child).value();
    other_session_ = store().new_frame(root).value();
  }

  CellArtifact artifact(const std::string& path, const std::string& checksum,
                        const std::string& cell = "cell-1") {
    CellArtifact a;
    a.path = path;
    a.filename = path.substr(path.rfind('/') + 1);
    a.content_type = "text/csv";
    a.size_bytes = 10;
    a.checksum = checksum;
    a.producing_cell_id = cell;
    a.frame_id = child_;
    return a;
  }

  Json record_ok(const CellArtifact& a) {
    auto record = store().record_cell_artifact(a);
    EXPECT_TRUE(record.ok()) << (record.ok() ? "" : record.error().message);
    return record.ok() ? record.value() : Json();
  }

  std::int64_t count(const std::string& table) {
    RawDb raw(db_path());
    return raw.integer("SELECT count(*) FROM " + table);
  }

  std::string session_;
  std::string child_;
  std::string other_session_;
};

TEST_F(ArtifactsTest, AFirstRecordCreatesAnArtifactAndItsHeadVersion) {
  Json record = record_ok(artifact("/w/out.csv", "c1"));
  EXPECT_TRUE(
      std::regex_match(record["artifact_id"].get<std::string>(), std::regex("a-[0-9a-f]{12}")));
  EXPECT_TRUE(
      std::regex_match(record["version_id"].get<std::string>(), std::regex("v-[0-9a-f]{12}")));
  EXPECT_EQ(record["filename"], "out.csv");
  EXPECT_EQ(record["path"], "/w/out.csv");
  EXPECT_EQ(record["content_type"], "text/csv");
  EXPECT_EQ(record["size_bytes"], 10);
  EXPECT_EQ(record["checksum"], "c1");
  EXPECT_TRUE(record["created_at"].is_number_integer());
  EXPECT_EQ(record.size(), 8u);

  RawDb raw(db_path());
  std::string artifact_id = record["artifact_id"];
  EXPECT_EQ(
      raw.text("SELECT latest_version_id FROM artifacts WHERE artifact_id = '" + artifact_id + "'"),
      record["version_id"].get<std::string>());
  // Scoped to the producing frame's session, not the child frame.
  EXPECT_EQ(raw.text("SELECT root_frame_id FROM artifacts"), session_);
  EXPECT_EQ(raw.text("SELECT project_id FROM artifacts"), "proj");
  EXPECT_EQ(raw.text("SELECT frame_id FROM artifact_versions"), child_);
  EXPECT_EQ(raw.text("SELECT producing_cell_id FROM artifact_versions"), "cell-1");
}

TEST_F(ArtifactsTest, TheSameCellRewritingTheSameBytesReusesTheVersion) {
  Json first = record_ok(artifact("/w/out.csv", "c1"));
  Json again = record_ok(artifact("/w/out.csv", "c1"));
  EXPECT_EQ(again["version_id"], first["version_id"]);
  EXPECT_EQ(again["artifact_id"], first["artifact_id"]);
  EXPECT_EQ(count("artifact_versions"), 1);
  EXPECT_EQ(count("artifacts"), 1);
}

TEST_F(ArtifactsTest, NewContentIsANewVersionOfTheSameArtifact) {
  Json first = record_ok(artifact("/w/out.csv", "c1"));
  Json second = record_ok(artifact("/w/out.csv", "c2"));
  EXPECT_NE(second["version_id"], first["version_id"]);
  EXPECT_EQ(second["artifact_id"], first["artifact_id"]);
  RawDb raw(db_path());
  EXPECT_EQ(raw.text("SELECT latest_version_id FROM artifacts"),
            second["version_id"].get<std::string>());
  // Back to the first bytes: that version is no longer the head, so new.
  Json third = record_ok(artifact("/w/out.csv", "c1"));
  EXPECT_NE(third["version_id"], first["version_id"]);
  EXPECT_EQ(count("artifact_versions"), 3);
}

TEST_F(ArtifactsTest, AnotherCellOrAnotherPathOrNeverIsANewVersion) {
  Json first = record_ok(artifact("/w/out.csv", "c1"));
  Json other_cell = record_ok(artifact("/w/out.csv", "c1", "cell-2"));
  EXPECT_NE(other_cell["version_id"], first["version_id"]);
  Json other_path = record_ok(artifact("/w/sub/out.csv", "c1", "cell-2"));
  EXPECT_NE(other_path["version_id"], other_cell["version_id"]);
  EXPECT_EQ(other_path["artifact_id"], first["artifact_id"]);
  CellArtifact never = artifact("/w/sub/out.csv", "c1", "cell-2");
  never.reuse_policy = "never";
  EXPECT_NE(record_ok(never)["version_id"], other_path["version_id"]);
  CellArtifact no_cell = artifact("/w/sub/out.csv", "c1");
  no_cell.producing_cell_id.reset();
  Json first_anonymous = record_ok(no_cell);
  EXPECT_NE(record_ok(no_cell)["version_id"], first_anonymous["version_id"]);
}

TEST_F(ArtifactsTest, ProvisionalReuseOnlyAdoptsAVersionWithoutASnapshot) {
  // prov_record's version (no snapshot) is adopted by save_artifact...
  Json tracked = record_ok(artifact("/w/out.csv", "c1"));
  CellArtifact saved = artifact("/w/out.csv", "c1");
  saved.reuse_policy = "provisional";
  saved.snapshot_path = "/snap/v-1__out.csv";
  Json adopted = record_ok(saved);
  EXPECT_EQ(adopted["version_id"], tracked["version_id"]);
  auto snapshot = store().version_snapshot_path(adopted["version_id"]);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot.value(), std::optional<std::string>("/snap/v-1__out.csv"));
  // ...but a second save makes its own version rather than steal that one.
  saved.snapshot_path = "/snap/v-2__out.csv";
  Json second = record_ok(saved);
  EXPECT_NE(second["version_id"], adopted["version_id"]);
}

TEST_F(ArtifactsTest, ReuseUnderAnyKeepsTheBoundSnapshot) {
  CellArtifact saved = artifact("/w/out.csv", "c1");
  saved.snapshot_path = "/snap/first";
  Json first = record_ok(saved);
  saved.snapshot_path = "/snap/second";
  Json again = record_ok(saved);
  EXPECT_EQ(again["version_id"], first["version_id"]);
  EXPECT_EQ(store().version_snapshot_path(first["version_id"]).value(),
            std::optional<std::string>("/snap/first"));
}

TEST_F(ArtifactsTest, SessionsWithTheSameFilenameGetSeparateArtifacts) {
  Json mine = record_ok(artifact("/w/out.csv", "c1"));
  CellArtifact theirs = artifact("/w/out.csv", "c1");
  theirs.frame_id = other_session_;
  Json other = record_ok(theirs);
  EXPECT_NE(other["artifact_id"], mine["artifact_id"]);
  EXPECT_NE(other["version_id"], mine["version_id"]);
}

TEST_F(ArtifactsTest, LineageSkipsEmptyDuplicateAndSelfInputs) {
  std::string in1 = record_ok(artifact("/w/a.csv", "a"))["version_id"];
  std::string in2 = record_ok(artifact("/w/b.csv", "b"))["version_id"];
  CellArtifact out = artifact("/w/out.csv", "o", "cell-2");
  out.input_version_ids = {in1, "", in2, in1, in2};
  std::string out_id = record_ok(out)["version_id"];
  EXPECT_EQ(count("lineage_edges"), 2);

  // Recorded again (reused) with itself among the inputs: nothing new.
  out.input_version_ids = {in1, out_id, in2};
  EXPECT_EQ(record_ok(out)["version_id"], out_id);
  EXPECT_EQ(count("lineage_edges"), 2);

  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM lineage_edges WHERE output_version_id = '" + out_id +
                        "' AND producing_cell_id = 'cell-2' AND frame_id = '" + child_ +
                        "' AND edge_id LIKE 'e-%'"),
            2);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM lineage_edges WHERE input_version_id = "
                        "output_version_id"),
            0);
}

TEST_F(ArtifactsTest, AnUnknownInputWritesNothing) {
  record_ok(artifact("/w/a.csv", "a"));
  CellArtifact out = artifact("/w/out.csv", "o");
  out.input_version_ids = {"v-000000000000"};
  auto record = store().record_cell_artifact(out);
  ASSERT_FALSE(record.ok());
  EXPECT_EQ(record.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(record.error().message.find("v-000000000000"), std::string::npos);
  EXPECT_EQ(count("artifacts"), 1);
  EXPECT_EQ(count("artifact_versions"), 1);
  EXPECT_EQ(count("lineage_edges"), 0);
}

TEST_F(ArtifactsTest, ExplicitScopeMustAgreeWithTheProducingFrame) {
  CellArtifact wrong_root = artifact("/w/out.csv", "c1");
  wrong_root.root_frame_id = other_session_;
  auto root_error = store().record_cell_artifact(wrong_root);
  ASSERT_FALSE(root_error.ok());
  EXPECT_EQ(root_error.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(root_error.error().message, "root_frame_id conflicts with producer frame");

  CellArtifact wrong_project = artifact("/w/out.csv", "c1");
  wrong_project.project_id = "elsewhere";
  auto project_error = store().record_cell_artifact(wrong_project);
  ASSERT_FALSE(project_error.ok());
  EXPECT_EQ(project_error.error().message, "project_id conflicts with producer frame");
  EXPECT_EQ(count("artifacts"), 0);

  CellArtifact agreeing = artifact("/w/out.csv", "c1");
  agreeing.root_frame_id = session_;
  agreeing.project_id = "proj";
  record_ok(agreeing);
}

TEST_F(ArtifactsTest, WithoutAKnownFrameTheExplicitRootOrTheFrameIdIsTheRoot) {
  CellArtifact unknown_frame = artifact("/w/a.csv", "a");
  unknown_frame.frame_id = "f-unknown";
  std::string a = record_ok(unknown_frame)["version_id"];
  EXPECT_EQ(store().version_in_scope(a, "f-unknown", "default").value(), true);

  CellArtifact explicit_root = artifact("/w/b.csv", "b");
  explicit_root.frame_id.reset();
  explicit_root.root_frame_id = "f-explicit";
  explicit_root.project_id = "p";
  std::string b = record_ok(explicit_root)["version_id"];
  EXPECT_EQ(store().version_in_scope(b, "f-explicit", "p").value(), true);
}

TEST_F(ArtifactsTest, BadInputIsInvalidArgument) {
  CellArtifact no_path = artifact("/w/a.csv", "a");
  no_path.path = "";
  CellArtifact no_name = artifact("/w/a.csv", "a");
  no_name.filename = "";
  CellArtifact no_checksum = artifact("/w/a.csv", "");
  CellArtifact negative = artifact("/w/a.csv", "a");
  negative.size_bytes = -1;
  CellArtifact bad_policy = artifact("/w/a.csv", "a");
  bad_policy.reuse_policy = "sometimes";
  for (const CellArtifact& a : {no_path, no_name, no_checksum, negative, bad_policy}) {
    auto record = store().record_cell_artifact(a);
    ASSERT_FALSE(record.ok());
    EXPECT_EQ(record.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(count("artifact_versions"), 0);
}

TEST_F(ArtifactsTest, VersionInScopeIsFalseForOtherSessionsAndUnknownIds) {
  std::string v = record_ok(artifact("/w/a.csv", "a"))["version_id"];
  EXPECT_TRUE(store().version_in_scope(v, session_, "proj").value());
  EXPECT_FALSE(store().version_in_scope(v, other_session_, "proj").value());
  EXPECT_FALSE(store().version_in_scope(v, session_, "default").value());
  EXPECT_FALSE(store().version_in_scope(v, child_, "proj").value());
  EXPECT_FALSE(store().version_in_scope("v-000000000000", session_, "proj").value());
  EXPECT_FALSE(store().version_in_scope(v, "", "proj").value());
}

TEST_F(ArtifactsTest, VersionForPathIsTheNewestInExactlyThisSession) {
  std::string v1 = record_ok(artifact("/w/out.csv", "c1"))["version_id"];
  tick();
  std::string v2 = record_ok(artifact("/w/out.csv", "c2"))["version_id"];
  CellArtifact theirs = artifact("/w/out.csv", "c3");
  theirs.frame_id = other_session_;
  tick();
  std::string v3 = record_ok(theirs)["version_id"];

  EXPECT_EQ(store().version_for_path("/w/out.csv", session_, "proj").value(),
            std::optional<std::string>(v2));
  EXPECT_EQ(store().version_for_path("/w/out.csv", other_session_, "proj").value(),
            std::optional<std::string>(v3));
  EXPECT_FALSE(store().version_for_path("/w/out.csv", session_, "default").value());
  EXPECT_FALSE(store().version_for_path("/w/other.csv", session_, "proj").value());
  EXPECT_FALSE(store().version_for_path("/w/out.csv", "f-nobody", "proj").value());
  EXPECT_NE(v1, v2);
}

TEST_F(ArtifactsTest, VersionForPathFollowsTheSameFileUnderAnotherName) {
  std::string real_dir = dir_.file("real");
  ASSERT_TRUE(std::filesystem::create_directory(real_dir));
  std::string real = real_dir + "/data.csv";
  std::ofstream(real) << "1,2\n";
  std::string linked_dir = dir_.file("linked");
  std::filesystem::create_directory_symlink(real_dir, linked_dir);
  std::string linked = linked_dir + "/data.csv";
  std::string hard = dir_.file("hard.csv");
  ASSERT_EQ(::link(real.c_str(), hard.c_str()), 0);

  std::string by_real = record_ok(artifact(real, "d1"))["version_id"];
  EXPECT_EQ(store().version_for_path(linked, session_, "proj").value(),
            std::optional<std::string>(by_real));
  tick();
  std::string by_link = record_ok(artifact(linked, "d2"))["version_id"];
  EXPECT_EQ(store().version_for_path(real, session_, "proj").value(),
            std::optional<std::string>(by_link));
  tick();
  std::string by_hard = record_ok(artifact(hard, "d3"))["version_id"];
  EXPECT_EQ(store().version_for_path(real, session_, "proj").value(),
            std::optional<std::string>(by_hard));
  // A newer exact match beats an older same-file one.
  tick();
  std::string exact = record_ok(artifact(real, "d4"))["version_id"];
  EXPECT_EQ(store().version_for_path(real, session_, "proj").value(),
            std::optional<std::string>(exact));
  // Another session's version of the same file is invisible.
  EXPECT_FALSE(store().version_for_path(real, other_session_, "proj").value());
}

TEST_F(ArtifactsTest, SnapshotPriorityAndOwnerUpdates) {
  Json record = record_ok(artifact("/w/a.csv", "a"));
  std::string v = record["version_id"];
  std::string a = record["artifact_id"];
  EXPECT_FALSE(store().version_snapshot_path(v).value().has_value());
  ASSERT_TRUE(store().bind_version_snapshot(v, "/snap/a").ok());
  EXPECT_EQ(store().version_snapshot_path(v).value(), std::optional<std::string>("/snap/a"));
  ASSERT_TRUE(store().set_artifact_priority(a, 5).ok());
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT priority FROM artifacts"), 5);
  EXPECT_EQ(store().artifact_of_version(v).value(), std::optional<std::string>(a));
  EXPECT_FALSE(store().artifact_of_version("v-000000000000").value().has_value());

  auto expect_invalid = [](const Status& status) {
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  };
  expect_invalid(store().bind_version_snapshot("v-000000000000", "/snap/x"));
  expect_invalid(store().bind_version_snapshot(v, ""));
  expect_invalid(store().set_artifact_priority("a-000000000000", 1));
  auto unknown = store().version_snapshot_path("v-000000000000");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace o4s::store::testing
