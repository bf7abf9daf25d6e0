// The shapes the kernel accepts before xeus reads a request's fields.
#include "jupyter/request_check.h"

#include <gtest/gtest.h>

namespace o4s::jupyter {
namespace {

TEST(RequestCheckTest, WellFormedRequestsPass) {
  EXPECT_FALSE(request_problem("execute_request", {{"code", "1"}, {"silent", false}}));
  EXPECT_FALSE(request_problem("complete_request", {{"code", "zi"}, {"cursor_pos", 2}}));
  EXPECT_FALSE(request_problem("history_request", {{"hist_access_type", "tail"}, {"n", 3}}));
  EXPECT_FALSE(request_problem("kernel_info_request", nl::json::object()));
  // Unchecked types are left to xeus.
  EXPECT_FALSE(request_problem("comm_open", {{"anything", 1}}));
}

TEST(RequestCheckTest, AWrongTypeNamesTheFieldAndBothTypes) {
  auto problem = request_problem("execute_request", {{"code", 5}});
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem, "field 'code' must be a string, not number");
  problem = request_problem("inspect_request", {{"code", "x"}, {"cursor_pos", "3"}});
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem, "field 'cursor_pos' must be an integer, not string");
}

TEST(RequestCheckTest, MissingRequiredFieldsAndNonObjectContent) {
  EXPECT_EQ(request_problem("execute_request", nl::json::object()).value_or(""),
            "missing field 'code'");
  EXPECT_EQ(request_problem("execute_request", nl::json::array()).value_or(""),
            "content must be a JSON object");
  EXPECT_EQ(request_problem("kernel_info_request", "text").value_or(""),
            "content must be a JSON object");
}

TEST(RequestCheckTest, TheErrorReplyAnswersTheRequest) {
  xeus::xmessage request({"client-id"}, {{"msg_id", "abc"}, {"msg_type", "execute_request"}},
                         nl::json::object(), nl::json::object(), {{"code", 5}},
                         xeus::buffer_sequence());
  xeus::xmessage reply = reply_to(request, "execute_reply", bad_request_content("why"));
  EXPECT_EQ(reply.identities(), std::vector<std::string>{"client-id"});
  EXPECT_EQ(reply.parent_header()["msg_id"], "abc");
  EXPECT_EQ(reply.header()["msg_type"], "execute_reply");
  EXPECT_EQ(reply.content()["status"], "error");
  EXPECT_EQ(reply.content()["ename"], "BadRequest");
  EXPECT_EQ(reply.content()["evalue"], "why");
  EXPECT_EQ(status_for(request, "idle").content()["execution_state"], "idle");
}

}  // namespace
}  // namespace o4s::jupyter
