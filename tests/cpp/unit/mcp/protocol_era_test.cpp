// Which era a request speaks, and what a 2026-07-28 result carries.
#include "mcp/protocol_era.h"

#include <gtest/gtest.h>

namespace o4s::mcp {
namespace {

Json with_meta(Json meta) { return Json{{"_meta", std::move(meta)}}; }

TEST(ProtocolEra, ReadsTheVersionAndCapabilitiesFromMeta) {
  EXPECT_FALSE(stateless_version(Json::object()).has_value());
  EXPECT_FALSE(stateless_version(with_meta(Json{{"progressToken", 1}})).has_value());
  EXPECT_EQ(stateless_version(with_meta(Json{{meta_key::kProtocolVersion, "2026-07-28"}})),
            "2026-07-28");
  EXPECT_EQ(stateless_version(with_meta(Json{{meta_key::kProtocolVersion, 5}})), "");
  Json caps{{"elicitation", Json::object()}};
  EXPECT_EQ(stateless_capabilities(with_meta(Json{{meta_key::kClientCapabilities, caps}})), caps);
  EXPECT_EQ(stateless_capabilities(with_meta(Json{{meta_key::kClientCapabilities, 1}})),
            Json::object());
  EXPECT_EQ(stateless_client_name(with_meta(Json{{meta_key::kClientInfo, {{"name", "x"}}}})), "x");
}

TEST(ProtocolEra, FormElicitation) {
  EXPECT_TRUE(can_elicit_form(Json{{"elicitation", Json::object()}}));
  EXPECT_TRUE(can_elicit_form(Json{{"elicitation", {{"form", Json::object()}}}}));
  EXPECT_FALSE(can_elicit_form(Json{{"elicitation", {{"url", Json::object()}}}}));
  EXPECT_FALSE(can_elicit_form(Json::object()));
  EXPECT_FALSE(can_elicit_form(Json{{"elicitation", true}}));
}

TEST(ProtocolEra, UnsupportedVersionNamesWhatIsSupported) {
  Json error = unsupported_version_error(4, "1900-01-01");
  EXPECT_EQ(error["error"]["code"], kUnsupportedProtocolVersion);
  EXPECT_EQ(error["error"]["data"]["requested"], "1900-01-01");
  EXPECT_EQ(error["error"]["data"]["supported"], Json::array({kStatelessVersion}));
  EXPECT_TRUE(supported_handshake_version("2025-06-18"));
  EXPECT_FALSE(supported_handshake_version(kStatelessVersion));
}

TEST(ProtocolEra, StampsResults) {
  Json info{{"name", "openai4s"}, {"version", "0"}};
  Json listed{{"tools", Json::array()}};
  stamp_stateless_result("tools/list", listed, info);
  EXPECT_EQ(listed["resultType"], "complete");
  EXPECT_EQ(listed["_meta"][meta_key::kServerInfo], info);
  EXPECT_EQ(listed["cacheScope"], "public");
  EXPECT_GT(listed["ttlMs"].get<long long>(), 0);

  Json asked{{"resultType", "input_required"}, {"requestState", "s"}};
  stamp_stateless_result("tools/call", asked, info);
  EXPECT_EQ(asked["resultType"], "input_required");
  EXPECT_FALSE(asked.contains("ttlMs"));

  Json read{{"contents", Json::array()}};
  stamp_stateless_result("resources/read", read, info);
  EXPECT_EQ(read["cacheScope"], "private");
}

}  // namespace
}  // namespace o4s::mcp
