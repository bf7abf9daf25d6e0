// Frames: ids, root and project inheritance, scope resolution.
#include <regex>

#include "store_fixture.h"

namespace o4s::store::testing {
namespace {

using FramesTest = StoreTest;

std::string new_frame_ok(Store& store, NewFrame frame = {}) {
  auto id = store.new_frame(frame);
  EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
  return id.ok() ? id.value() : std::string();
}

TEST_F(FramesTest, TimestampsComeFromTheStoresClock) {
  // A day ahead of the real time: only the injected clock can say so.
  tick(86'400'000);
  std::string id = new_frame_ok(store());
  auto frame = store().get_frame(id);
  ASSERT_TRUE(frame.ok() && frame.value().has_value());
  EXPECT_EQ((*frame.value())["created_at"], clock_ms_.load());
  EXPECT_EQ((*frame.value())["updated_at"], clock_ms_.load());
}

TEST_F(FramesTest, ARootFrameIsItsOwnRootWithTheDefaults) {
  std::string id = new_frame_ok(store());
  EXPECT_TRUE(std::regex_match(id, std::regex("f-[0-9a-f]{12}"))) << id;
  auto frame = store().get_frame(id);
  ASSERT_TRUE(frame.ok());
  ASSERT_TRUE(frame.value().has_value());
  const Json& row = *frame.value();
  EXPECT_EQ(row["frame_id"], id);
  EXPECT_EQ(row["root_frame_id"], id);
  EXPECT_EQ(row["project_id"], "default");
  EXPECT_EQ(row["kind"], "turn");
  EXPECT_EQ(row["status"], "processing");
  EXPECT_EQ(row["depth"], 0);
  EXPECT_TRUE(row["parent_id"].is_null());
  EXPECT_TRUE(row["name"].is_null());
  EXPECT_GT(row["created_at"].get<std::int64_t>(), 1'600'000'000'000);
  EXPECT_EQ(row["created_at"], row["updated_at"]);
}

TEST_F(FramesTest, DescendantsInheritTheRootAndItsProject) {
  NewFrame root;
  root.project_id = "proj-a";
  root.name = "session";
  std::string root_id = new_frame_ok(store(), root);

  NewFrame child;
  child.parent_id = root_id;
  child.project_id = "ignored";
  child.kind = "delegate";
  child.depth = 1;
  std::string child_id = new_frame_ok(store(), child);

  NewFrame grandchild;
  grandchild.parent_id = child_id;
  grandchild.kind = "compaction_fork";
  grandchild.depth = 2;
  std::string grandchild_id = new_frame_ok(store(), grandchild);

  for (const std::string& id : {child_id, grandchild_id}) {
    auto row = store().get_frame(id);
    ASSERT_TRUE(row.ok() && row.value());
    EXPECT_EQ((*row.value())["root_frame_id"], root_id);
    EXPECT_EQ((*row.value())["project_id"], "proj-a");
  }
  auto scope = store().resolve_frame_scope(grandchild_id);
  ASSERT_TRUE(scope.ok());
  EXPECT_EQ(scope->frame_id, grandchild_id);
  EXPECT_EQ(scope->root_frame_id, root_id);
  EXPECT_EQ(scope->project_id, "proj-a");
}

TEST_F(FramesTest, AMissingParentLeavesTheFrameItsOwnRoot) {
  NewFrame frame;
  frame.parent_id = "f-doesnotexist";
  frame.project_id = "mine";
  std::string id = new_frame_ok(store(), frame);
  auto row = store().get_frame(id);
  ASSERT_TRUE(row.ok() && row.value());
  EXPECT_EQ((*row.value())["root_frame_id"], id);
  EXPECT_EQ((*row.value())["project_id"], "mine");
  EXPECT_EQ((*row.value())["parent_id"], "f-doesnotexist");
}

TEST_F(FramesTest, TheRootFramesProjectWinsOverADescendantsOwn) {
  std::string root_id = new_frame_ok(store());
  NewFrame child;
  child.parent_id = root_id;
  std::string child_id = new_frame_ok(store(), child);
  RawDb raw(db_path());
  raw.exec("UPDATE frames SET project_id = 'drifted' WHERE frame_id = '" + child_id + "'");
  raw.exec("UPDATE frames SET project_id = 'moved' WHERE frame_id = '" + root_id + "'");
  auto scope = store().resolve_frame_scope(child_id);
  ASSERT_TRUE(scope.ok());
  EXPECT_EQ(scope->project_id, "moved");
}

TEST_F(FramesTest, UnknownOrAbsentIdsResolveToThemselvesAndTheFallback) {
  auto unknown = store().resolve_frame_scope(std::string("f-nope"), "fallback");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->frame_id, "f-nope");
  EXPECT_EQ(unknown->root_frame_id, "f-nope");
  EXPECT_EQ(unknown->project_id, "fallback");

  auto absent = store().resolve_frame_scope(std::nullopt);
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->frame_id, "");
  EXPECT_EQ(absent->root_frame_id, "");
  EXPECT_EQ(absent->project_id, "default");

  auto missing = store().get_frame("f-nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing.value().has_value());
}

TEST_F(FramesTest, BadKindStatusProjectOrDepthIsRefusedAndWritesNothing) {
  NewFrame bad_kind;
  bad_kind.kind = "chat";
  NewFrame bad_status;
  bad_status.status = "running";
  NewFrame bad_project;
  bad_project.project_id = "";
  NewFrame bad_depth;
  bad_depth.depth = -1;
  for (const NewFrame& frame : {bad_kind, bad_status, bad_project, bad_depth}) {
    auto id = store().new_frame(frame);
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.error().code, ErrorCode::kInvalidArgument);
  }
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM frames"), 0);
}

TEST_F(FramesTest, EveryKindAndStatusIsAccepted) {
  for (const char* kind : {"turn", "delegate", "compaction_fork"}) {
    for (const char* status : {"processing", "done", "failed", "awaiting_user_response"}) {
      NewFrame frame;
      frame.kind = kind;
      frame.status = status;
      EXPECT_TRUE(store().new_frame(frame).ok()) << kind << " " << status;
    }
  }
}

}  // namespace
}  // namespace o4s::store::testing
