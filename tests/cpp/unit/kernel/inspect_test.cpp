// The variable inspection transaction (spec kernel.md §3.9): validated
// locally, idle-only (Busy instead of a second reader), strict about replies.
#include <gtest/gtest.h>

#include <future>
#include <regex>
#include <thread>

#include "proto/limits.h"
#include "support/manager_harness.h"

namespace o4s::kernel {
namespace {

using o4s::testing::FakeTransport;
using o4s::testing::ManagerHarness;
using o4s::testing::response_frame;
using proto::Json;
using namespace std::chrono_literals;

Json variables_for(const Json& request) {
  return Json{{"type", "variables_response"},
              {"id", request["id"]},
              {"variables", Json::array({{{"name", "x"}, {"type", "int"}}})},
              {"truncated", false},
              {"limit", request["limit"]}};
}

// The worker answers inspect_variables with `reply(request)`.
void answer_inspect(ManagerHarness& h, std::function<void(const Json&, FakeTransport&)> reply) {
  h.transport->set_responder([reply](const Json& frame, FakeTransport& t) {
    if (proto::frame_type(frame) == "inspect_variables") reply(frame, t);
  });
}

TEST(InspectVariablesTest, ReturnsTheMatchingResponse) {
  ManagerHarness h;
  h.started();
  answer_inspect(h, [](const Json& req, FakeTransport& t) { t.push_frame(variables_for(req)); });
  auto result = h.manager->inspect_variables(200);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value()["variables"][0]["name"], "x");
  auto sent = h.transport->written_frames_of_type("inspect_variables");
  ASSERT_EQ(sent.size(), 1U);
  EXPECT_EQ(sent[0]["limit"], 200);
  const std::regex id(
      "^variables-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  EXPECT_TRUE(std::regex_match(sent[0]["id"].get<std::string>(), id)) << sent[0]["id"];
}

TEST(InspectVariablesTest, LimitOutOfRangeIsRejectedBeforeAnyFrame) {
  ManagerHarness h;
  h.started();
  const std::size_t before = h.transport->written_lines().size();
  for (long long limit : {0LL, -1LL, 501LL, 1LL << 40}) {
    auto result = h.manager->inspect_variables(limit);
    ASSERT_FALSE(result.ok()) << limit;
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(result.error().message, "variable inspection limit must be between 1 and 500");
  }
  EXPECT_EQ(h.transport->written_lines().size(), before);
}

TEST(InspectVariablesTest, LimitBoundsAreInclusive) {
  ManagerHarness h;
  h.started();
  answer_inspect(h, [](const Json& req, FakeTransport& t) { t.push_frame(variables_for(req)); });
  EXPECT_TRUE(h.manager->inspect_variables(proto::kInspectLimitMin).ok());
  EXPECT_TRUE(h.manager->inspect_variables(proto::kInspectLimitMax).ok());
}

TEST(InspectVariablesTest, NotAlive) {
  ManagerHarness h;
  h.started();
  h.transport->set_alive(false);
  auto result = h.manager->inspect_variables(10);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kNotAlive);
  EXPECT_EQ(result.error().message, "kernel worker is not alive");
}

TEST(InspectVariablesTest, BusyWhileAnExecuteHoldsTheTransaction) {
  ManagerHarness h;
  h.started();
  h.transport->set_when_empty(FakeTransport::WhenEmpty::kBlock);
  auto running = std::async(std::launch::async, [&h] { return h.execute("long cell"); });
  // The execute frame is sent only after the transaction lock is taken.
  ASSERT_TRUE(h.transport->wait_for_frame("execute", 5s));
  ASSERT_TRUE(h.transport->wait_for_blocked_reader(5s));

  const std::size_t before = h.transport->written_lines().size();
  auto busy = h.manager->inspect_variables(10);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, ErrorCode::kBusy);
  EXPECT_EQ(busy.error().message, "kernel worker is busy");
  // Nothing was sent, so the cell's transaction is still aligned.
  EXPECT_EQ(h.transport->written_lines().size(), before);

  Json response = response_frame();
  response["stdout"] = "done";
  h.transport->push_frame(response);
  auto finished = running.get();
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ(finished.value()["stdout"], "done");

  // Idle again: inspection goes through.
  answer_inspect(h, [](const Json& req, FakeTransport& t) { t.push_frame(variables_for(req)); });
  EXPECT_TRUE(h.manager->inspect_variables(10).ok());
}

TEST(InspectVariablesTest, UpToEightLogFramesAreSkipped) {
  ManagerHarness h;
  h.started();
  answer_inspect(h, [](const Json& req, FakeTransport& t) {
    for (std::size_t i = 0; i < proto::kLogFramesSkippedLimit; ++i) {
      t.push_frame(Json{{"type", "log"}, {"msg", "m"}});
    }
    t.push_frame(variables_for(req));
  });
  EXPECT_TRUE(h.manager->inspect_variables(10).ok());
}

struct BadReply {
  const char* label;
  std::function<void(const Json& request, FakeTransport&)> reply;
  ErrorCode code;
  std::string message;
};

TEST(InspectVariablesTest, BadRepliesFailWithTheirOwnMessages) {
  const std::string desync = "kernel protocol desynchronized during variable inspection";
  const std::vector<BadReply> cases = {
      {"ninth log",
       [](const Json& req, FakeTransport& t) {
         for (std::size_t i = 0; i < proto::kLogFramesSkippedLimit + 1; ++i) {
           t.push_frame(Json{{"type", "log"}, {"msg", "m"}});
         }
         t.push_frame(variables_for(req));
       },
       ErrorCode::kProtocol, desync},
      {"wrong id",
       [](const Json& req, FakeTransport& t) {
         Json reply = variables_for(req);
         reply["id"] = "variables-other";
         t.push_frame(reply);
       },
       ErrorCode::kProtocol, desync},
      {"other frame type", [](const Json&, FakeTransport& t) { t.push_frame(response_frame()); },
       ErrorCode::kProtocol, desync},
      {"error reported",
       [](const Json& req, FakeTransport& t) {
         Json reply = variables_for(req);
         reply["error"] = "variable inspection failed closed";
         t.push_frame(reply);
       },
       ErrorCode::kProtocol, "variable inspection failed: variable inspection failed closed"},
      {"variables not a list",
       [](const Json& req, FakeTransport& t) {
         Json reply = variables_for(req);
         reply["variables"] = Json::object();
         t.push_frame(reply);
       },
       ErrorCode::kProtocol, "invalid variables response from kernel worker"},
      {"variables missing",
       [](const Json& req, FakeTransport& t) {
         Json reply = variables_for(req);
         reply.erase("variables");
         t.push_frame(reply);
       },
       ErrorCode::kProtocol, "invalid variables response from kernel worker"},
      {"end of stream", [](const Json&, FakeTransport& t) { t.push_end_of_stream(); },
       ErrorCode::kWorkerExited, "kernel worker exited during variable inspection"},
  };
  for (const auto& c : cases) {
    ManagerHarness h;
    h.started();
    answer_inspect(h, c.reply);
    auto result = h.manager->inspect_variables(10);
    ASSERT_FALSE(result.ok()) << c.label;
    EXPECT_EQ(result.error().code, c.code) << c.label;
    EXPECT_EQ(result.error().message, c.message) << c.label;
  }
}

TEST(InspectVariablesTest, NullErrorIsNotAnError) {
  ManagerHarness h;
  h.started();
  answer_inspect(h, [](const Json& req, FakeTransport& t) {
    Json reply = variables_for(req);
    reply["error"] = nullptr;
    t.push_frame(reply);
  });
  EXPECT_TRUE(h.manager->inspect_variables(10).ok());
}

}  // namespace
}  // namespace o4s::kernel
