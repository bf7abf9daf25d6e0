// The JSON-RPC layer's sorting of messages and its replies.
#include "mcp/json_rpc.h"

#include <gtest/gtest.h>

namespace o4s::mcp {
namespace {

TEST(JsonRpc, SortsRequestsNotificationsAndResponses) {
  auto request = classify(Json::parse(R"({"jsonrpc":"2.0","id":7,"method":"ping"})"));
  EXPECT_EQ(request.kind, MessageKind::kRequest);
  EXPECT_EQ(request.id, 7);
  EXPECT_EQ(request.method, "ping");
  EXPECT_TRUE(request.params.is_object());

  auto note = classify(Json::parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_EQ(note.kind, MessageKind::kNotification);

  auto response = classify(Json::parse(R"({"jsonrpc":"2.0","id":"o4s-1","result":{}})"));
  EXPECT_EQ(response.kind, MessageKind::kResponse);
  EXPECT_EQ(response.id, "o4s-1");
}

TEST(JsonRpc, RefusesWhatIsNotJsonRpc) {
  for (const char* text : {
           R"([1])",
           R"({"id":1,"method":"ping"})",
           R"({"jsonrpc":"1.0","id":1,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1,"method":5})",
           R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})",
           R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})",
           R"({"jsonrpc":"2.0","id":1})",
       }) {
    auto in = classify(Json::parse(text));
    EXPECT_EQ(in.kind, MessageKind::kInvalid) << text;
    EXPECT_FALSE(in.error.empty()) << text;
  }
}

TEST(JsonRpc, KeepsAValidIdOnAnInvalidRequest) {
  auto in = classify(Json::parse(R"({"jsonrpc":"1.0","id":"a","method":"ping"})"));
  EXPECT_EQ(in.id, "a");
  auto bad_id = classify(Json::parse(R"({"jsonrpc":"1.0","id":{"x":1},"method":"ping"})"));
  EXPECT_TRUE(bad_id.id.is_null());
}

TEST(JsonRpc, BuildsReplies) {
  Json error = error_response(3, rpc_error::kMethodNotFound, "Method not found: x", Json{{"a", 1}});
  EXPECT_EQ(error["jsonrpc"], "2.0");
  EXPECT_EQ(error["id"], 3);
  EXPECT_EQ(error["error"]["code"], -32601);
  EXPECT_EQ(error["error"]["data"]["a"], 1);
  EXPECT_FALSE(error_response(nullptr, -32700, "x")["error"].contains("data"));
  EXPECT_EQ(result_response("r", Json::object())["result"], Json::object());
  EXPECT_FALSE(notification("n", Json::object()).contains("id"));
  EXPECT_EQ(request(1, "m", Json::object())["method"], "m");
}

TEST(JsonRpc, IdKeysTellStringsFromNumbers) {
  EXPECT_NE(id_key(Json(1)), id_key(Json("1")));
  EXPECT_EQ(id_key(Json(1)), id_key(Json::parse("1")));
}

}  // namespace
}  // namespace o4s::mcp
