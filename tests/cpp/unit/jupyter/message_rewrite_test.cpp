// Where xeus 2.4 departs from the messaging protocol, the message is
// rewritten on its way (message_rewrite.h).
#include "jupyter/message_rewrite.h"

#include <gtest/gtest.h>

namespace o4s::jupyter {
namespace {

xeus::xmessage request(const std::string& type, nl::json content) {
  return xeus::xmessage({"client-identity"}, {{"msg_type", type}, {"msg_id", "m1"}},
                        nl::json::object(), nl::json::object(), std::move(content),
                        xeus::buffer_sequence());
}

TEST(MessageRewriteTest, AnInputRequestSaysPassword) {
  auto hidden =
      input_request_to_the_letter(request("input_request", {{"prompt", "pw: "}, {"pwd", true}}));
  EXPECT_EQ(hidden.content(), (nl::json{{"prompt", "pw: "}, {"password", true}}));
  EXPECT_EQ(hidden.identities(), xeus::xmessage::guid_list{"client-identity"});
  auto shown = input_request_to_the_letter(request("input_request", {{"pwd", false}}));
  EXPECT_EQ(shown.content(), (nl::json{{"password", false}}));
  // Other messages pass as they are.
  auto other = input_request_to_the_letter(request("stream", {{"pwd", true}}));
  EXPECT_EQ(other.content(), (nl::json{{"pwd", true}}));
}

TEST(MessageRewriteTest, OnlyShownUnstoredCellsAreMadeUncounted) {
  EXPECT_TRUE(shown_but_unstored(request("execute_request", {{"store_history", false}})));
  EXPECT_FALSE(shown_but_unstored(request("execute_request", {{"code", "1"}})));
  EXPECT_FALSE(
      shown_but_unstored(request("execute_request", {{"silent", true}, {"store_history", false}})));
  EXPECT_FALSE(shown_but_unstored(request("complete_request", {{"store_history", false}})));
  auto uncounted =
      as_uncounted(request("execute_request", {{"code", "x"}, {"store_history", false}}));
  EXPECT_EQ(uncounted.content(),
            (nl::json{{"code", "x"}, {"store_history", false}, {"silent", true}}));
  EXPECT_EQ(uncounted.header()["msg_id"], "m1");
}

TEST(MessageRewriteTest, ASkippedCellIsAborted) {
  auto reply = aborted_reply(request("execute_request", {{"code", "1"}}));
  EXPECT_EQ(reply.header()["msg_type"], "execute_reply");
  EXPECT_EQ(reply.parent_header()["msg_id"], "m1");
  EXPECT_EQ(reply.content(), (nl::json{{"status", "aborted"}}));
  EXPECT_EQ(reply.identities(), xeus::xmessage::guid_list{"client-identity"});
}

}  // namespace
}  // namespace o4s::jupyter
