// The host method table drives the gate, the targets, the audit row and the
// refusals: through a real dispatcher on a real SQLite store.
#include "host/host_methods.h"

#include <gtest/gtest.h>

#include <set>

#include "host/audit_story.h"
#include "host/dispatcher.h"
#include "host/permission_gate.h"
#include "support/temp_dir.h"

namespace o4s::host {
namespace {

class HostMethodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::Store::open(dir_.file("db.sqlite"));
    ASSERT_TRUE(store.ok());
    DispatcherConfig config;
    config.store = store.value();
    config.workspace = dir_.path();
    config.data_dir = dir_.file("data");
    config.artifacts_dir = dir_.file("artifacts");
    dispatcher_ = std::make_unique<HostDispatcher>(config);
  }

  testing::TempDir dir_;
  std::unique_ptr<HostDispatcher> dispatcher_;
};

TEST(HostMethodTable, NamesEachMethodOnce) {
  std::set<std::string_view> names;
  for (const HostMethod& method : host_methods()) {
    EXPECT_TRUE(names.insert(method.name).second) << method.name;
    EXPECT_EQ(find_host_method(method.name), &method);
  }
  EXPECT_EQ(find_host_method("bash"), nullptr);
}

TEST(HostMethodTable, DrivesTheGateAndItsTarget) {
  EXPECT_EQ(gated_tool("authorize_bash"), "bash");
  EXPECT_EQ(gated_tool("read_file"), "read_file");
  EXPECT_EQ(gated_tool("capabilities"), std::nullopt);
  EXPECT_EQ(gated_tool("no_such_method"), std::nullopt);
  using Json = nlohmann::json;
  EXPECT_EQ(permission_target("web_fetch", Json::array({{{"url", "https://www.x.org/a?b"}}})),
            "x.org");
  EXPECT_EQ(permission_target("list_dir", Json::array({Json::object()})), ".");
  EXPECT_EQ(permission_target("mcp_call", Json::array({{{"server", "s"}, {"tool", "t"}}})), "s/t");
  EXPECT_EQ(permission_target("skills_publish", Json::array({"mine"})), "mine");
  EXPECT_EQ(call_summary("credentials_set", Json::array({"TOKEN"})), std::nullopt);
}

TEST_F(HostMethodsTest, EveryServedMethodReachesItsHandlerAndEveryOtherIsRefused) {
  CallContext context;
  for (const HostMethod& method : host_methods()) {
    auto result =
        dispatcher_->call(std::string(method.name), Json::array({Json::object()}), context);
    bool refused = !result && result.error().message.find("does not serve it") != std::string::npos;
    EXPECT_EQ(refused, method.handler == nullptr) << method.name;
  }
}

TEST_F(HostMethodsTest, RefusalIsOneLineNamingTheMethod) {
  auto result = dispatcher_->call("llm", Json::array(), CallContext());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "unknown host method: 'llm' (the worker SDK names it, but this host does not serve "
            "it)");
  EXPECT_EQ(handler_error_kind(result.error()), HandlerErrorKind::kValue);
}

TEST_F(HostMethodsTest, ArgumentBoundIsEnforcedBeforeTheHandler) {
  auto result = dispatcher_->call("capabilities", Json::array({1, 2}), CallContext());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("takes at most 1 argument"), std::string::npos);
}

}  // namespace
}  // namespace o4s::host
