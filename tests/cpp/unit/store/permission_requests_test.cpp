// Durable permission requests and settings.
#include <regex>

#include "store_fixture.h"

namespace o4s::store::testing {
namespace {

using PermissionRequestsTest = StoreTest;

PermissionRequest sample_request() {
  PermissionRequest request;
  request.root_frame_id = "f-root";
  request.frame_id = "f-child";
  request.project_id = "default";
  request.action_id = "act-1";
  request.tool = "bash";
  request.target = "ls -la";
  request.resource_keys = {"fs:/tmp", "net:example.com"};
  request.payload = Json{{"type", "await_permission"}, {"tool", "bash"}};
  request.ttl_ms = 60'000;
  return request;
}

TEST_F(PermissionRequestsTest, ACreatedRequestIsPendingAndNamesItselfInItsPayload) {
  auto id = store().create_permission_request(sample_request());
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_TRUE(std::regex_match(id.value(), std::regex("perm-[0-9a-f]{12}"))) << id.value();
  auto row = store().get_permission_request(id.value());
  ASSERT_TRUE(row.ok() && row.value());
  const Json& request = *row.value();
  EXPECT_EQ(request["state"], "pending");
  EXPECT_EQ(request["tool"], "bash");
  EXPECT_EQ(request["target"], "ls -la");
  EXPECT_EQ(request["root_frame_id"], "f-root");
  EXPECT_EQ(request["action_id"], "act-1");
  EXPECT_TRUE(request["action_group_id"].is_null());
  EXPECT_EQ(request["resource_keys"], Json::array({"fs:/tmp", "net:example.com"}));
  EXPECT_EQ(request["payload"]["type"], "await_permission");
  EXPECT_EQ(request["payload"]["decision_id"], id.value());
  EXPECT_EQ(request["continuation_required"], false);
  EXPECT_EQ(request["expires_at"].get<std::int64_t>() - request["created_at"].get<std::int64_t>(),
            60'000);
  EXPECT_TRUE(request["resolved_at"].is_null());
}

TEST_F(PermissionRequestsTest, ResolvingIsFinalButRepeatingTheSameStateIsHarmless) {
  auto id = store().create_permission_request(sample_request());
  ASSERT_TRUE(id.ok());
  PermissionResolution denied;
  denied.state = "denied";
  denied.message = "approval required but no interactive channel is attached";
  denied.resolution_context = "unattended";
  ASSERT_TRUE(store().resolve_permission_request(id.value(), denied).ok());
  EXPECT_TRUE(store().resolve_permission_request(id.value(), denied).ok());

  PermissionResolution allowed;
  allowed.state = "allowed";
  allowed.scope = "once";
  auto changed = store().resolve_permission_request(id.value(), allowed);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.error().code, ErrorCode::kInvalidArgument);

  auto row = store().get_permission_request(id.value());
  ASSERT_TRUE(row.ok() && row.value());
  EXPECT_EQ((*row.value())["state"], "denied");
  EXPECT_EQ((*row.value())["message"], *denied.message);
  EXPECT_EQ((*row.value())["resolution_context"], "unattended");
  EXPECT_TRUE((*row.value())["scope"].is_null());
  EXPECT_TRUE((*row.value())["resolved_at"].is_number_integer());
}

TEST_F(PermissionRequestsTest, BadInputIsInvalidArgument) {
  PermissionRequest no_tool = sample_request();
  no_tool.tool = "";
  PermissionRequest no_ttl = sample_request();
  no_ttl.ttl_ms = 0;
  for (const PermissionRequest& request : {no_tool, no_ttl}) {
    auto id = store().create_permission_request(request);
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.error().code, ErrorCode::kInvalidArgument);
  }

  auto id = store().create_permission_request(sample_request());
  ASSERT_TRUE(id.ok());
  PermissionResolution pending;
  pending.state = "pending";
  PermissionResolution bad_scope;
  bad_scope.state = "allowed";
  bad_scope.scope = "forever";
  PermissionResolution bad_context;
  bad_context.state = "allowed";
  bad_context.resolution_context = "whenever";
  for (const PermissionResolution& resolution : {pending, bad_scope, bad_context}) {
    auto status = store().resolve_permission_request(id.value(), resolution);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  }
  PermissionResolution fine;
  fine.state = "cancelled";
  auto unknown = store().resolve_permission_request("perm-000000000000", fine);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  auto missing = store().get_permission_request("perm-000000000000");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing.value().has_value());
  // Still pending after all the refusals.
  auto row = store().get_permission_request(id.value());
  EXPECT_EQ((*row.value())["state"], "pending");
}

TEST_F(PermissionRequestsTest, EveryTerminalStateIsAccepted) {
  for (const char* state : {"allowed", "denied", "timed_out", "cancelled"}) {
    auto id = store().create_permission_request(sample_request());
    ASSERT_TRUE(id.ok());
    PermissionResolution resolution;
    resolution.state = state;
    EXPECT_TRUE(store().resolve_permission_request(id.value(), resolution).ok()) << state;
  }
}

TEST_F(PermissionRequestsTest, SettingsRoundTripAndOverwrite) {
  EXPECT_FALSE(store().get_setting("k").value().has_value());
  ASSERT_TRUE(store().set_setting("k", "one").ok());
  ASSERT_TRUE(store().set_setting("k", "two").ok());
  EXPECT_EQ(store().get_setting("k").value(), std::optional<std::string>("two"));
  auto empty_key = store().set_setting("", "x");
  ASSERT_FALSE(empty_key.ok());
  EXPECT_EQ(empty_key.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace o4s::store::testing
