// The manager's one frame loop (kernel/frame_loop.cpp): every frame a worker
// sends is routed by type through one table to the request that waits, and
// each wait keeps its bound and the one malformed-line rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kernel/frame_route.h"
#include "proto/frame_types.h"
#include "support/manager_harness.h"

namespace o4s::kernel {
namespace {

using o4s::testing::FakeTransport;
using o4s::testing::ManagerHarness;
using o4s::testing::response_frame;
using proto::Json;

Json complete_reply(const Json& request) {
  return Json{{"type", "complete_reply"},
              {"id", request["id"]},
              {"matches", Json::array({"print"})},
              {"cursor_start", 0},
              {"cursor_end", 3}};
}

// The worker answers `complete` by pushing `before` and then, unless told
// not to, its reply.
void answer_complete(ManagerHarness& h, std::vector<std::string> before, bool reply = true) {
  h.transport->set_responder([before, reply](const Json& frame, FakeTransport& self) {
    if (proto::frame_type(frame) != "complete") return;
    for (const auto& line : before) self.push_line(line);
    if (reply) self.push_frame(complete_reply(frame));
  });
}

bool log_mentions(const KernelManager& manager, const std::string& words) {
  auto tail = manager.worker_log_tail();
  return std::any_of(tail.begin(), tail.end(), [&](const std::string& line) {
    return line.find(words) != std::string::npos;
  });
}

TEST(FrameRouteTest, EveryWorkerFrameHasOneRowAndNoHostFrameHasAny) {
  std::set<std::string_view> routed;
  for (const FrameRoute& route : kFrameRoutes) {
    EXPECT_TRUE(routed.insert(route.type).second) << "two rows for " << route.type;
  }
  for (std::string_view type : proto::frame::kWorkerToHost) {
    EXPECT_NE(route_of(type), FrameKind::kUnknown) << type;
  }
  for (std::string_view type : proto::frame::kHostToWorker) {
    EXPECT_EQ(route_of(type), FrameKind::kUnknown) << type;
  }
  EXPECT_EQ(route_of(Json::array({1})), FrameKind::kUnknown);
  EXPECT_EQ(route_of(Json{{"type", 7}}), FrameKind::kUnknown);
}

TEST(FrameLoopTest, AMalformedLineBetweenAnIdleRequestAndItsReplyIsCountedAndSkipped) {
  ManagerHarness h;
  h.started();
  answer_complete(h, {"this is not json\n"});
  auto answer = h.manager->complete("pri", 3);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer.value()["matches"], Json::array({"print"}));
  EXPECT_EQ(h.manager->malformed_frames(), 1U);
  EXPECT_TRUE(log_mentions(*h.manager, "malformed worker frame"));
  EXPECT_TRUE(h.manager->is_alive());
}

TEST(FrameLoopTest, AMalformedLineDuringACellIsCountedAndSkipped) {
  ManagerHarness h;
  h.started();
  h.transport->push_line("{broken\n");
  Json response = response_frame(o4s::testing::kCellId);
  response["stdout"] = "ok";
  h.transport->push_frame(response);
  auto result = h.execute();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value()["stdout"], "ok");
  EXPECT_EQ(h.manager->malformed_frames(), 1U);
}

TEST(FrameLoopTest, AReplyForARequestThatIsNotWaitingFailsAStrictIdleRequest) {
  ManagerHarness h;
  h.started();
  // A variables_response while a completion waits: not its answer, and an
  // idle worker has no other request outstanding.
  answer_complete(h, {Json{{"type", "variables_response"}, {"id", "variables-x"}}.dump() + "\n"});
  auto answer = h.manager->complete("pri", 3);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(answer.error().message, "kernel protocol desynchronized during completion");
  // Not a silent worker: it is left running.
  EXPECT_EQ(h.transport->kill_calls(), 0);
}

TEST(FrameLoopTest, AFinishedCellsFramesDuringAnIdleRequestAreCountedAsStale) {
  ManagerHarness h;
  h.started();
  answer_complete(
      h, {
             Json{{"type", "stdout_chunk"}, {"id", "old"}, {"text", "x"}}.dump() + "\n",
             Json{{"type", "display"}, {"id", "old"}, {"data", Json::object()}}.dump() + "\n",
             Json{{"type", "input_request"}, {"id", "old"}, {"prompt", "?"}}.dump() + "\n",
         });
  auto answer = h.manager->complete("pri", 3);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(h.manager->stale_stdout_chunks(), 1U);
  EXPECT_EQ(h.manager->stale_displays(), 1U);
  // The finished cell's input() is told so rather than left waiting.
  auto replies = h.transport->written_frames_of_type("input_reply");
  ASSERT_EQ(replies.size(), 1U);
  EXPECT_EQ(replies[0]["error"], "no input channel: the cell that asked has finished");
}

TEST(FrameLoopTest, IdleRepliesArrivingDuringACellAreNotItsAnswer) {
  ManagerHarness h;
  h.started();
  // Late answers of requests that already gave up, and another cell's
  // response, between the execute and its own response.
  h.transport->push_frame(Json{{"type", "complete_reply"}, {"id", "complete-old"}});
  h.transport->push_frame(Json{{"type", "variables_response"}, {"id", "variables-old"}});
  h.transport->push_frame(Json{{"type", "stdout_text"}, {"id", "fence-old"}, {"text", ""}});
  h.transport->push_frame(response_frame("another-cell"));
  Json response = response_frame(o4s::testing::kCellId);
  response["stdout"] = "mine";
  h.transport->push_frame(response);
  auto result = h.execute();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value()["stdout"], "mine");
  EXPECT_EQ(h.manager->stale_responses(), 1U);
  EXPECT_EQ(h.manager->malformed_frames(), 0U);
}

TEST(FrameLoopTest, AWorkerThatIgnoresARequestTypeHitsTheBoundAndIsStopped) {
  ManagerHarness h;
  h.options.idle_reply_timeout_s = 0.2;
  h.started();
  // The worker reads the request, says something unrelated, then nothing.
  h.transport->set_when_empty(FakeTransport::WhenEmpty::kBlock);
  answer_complete(h, {Json{{"type", "log"}, {"msg", "what is complete?"}}.dump() + "\n"},
                  /*reply=*/false);
  auto answer = h.manager->complete("pri", 3);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kUnresponsive);
  EXPECT_NE(answer.error().message.find("did not answer the completion request within 0.2s"),
            std::string::npos)
      << answer.error().message;
  EXPECT_GE(h.transport->kill_calls(), 1);
  EXPECT_FALSE(h.manager->is_alive());
  EXPECT_TRUE(log_mentions(*h.manager, "what is complete?"));
}

TEST(FrameLoopTest, AHostCallDuringAStdoutResendIsServedAndTheResendCompletes) {
  ManagerHarness h;
  h.options.idle_reply_timeout_s = 5.0;
  h.hooks->set_dispatcher([](const std::string&, const Json&) -> DispatchOutcome {
    return Json{{"pong", true}};
  });
  h.started();
  h.transport->set_responder([](const Json& frame, FakeTransport& self) {
    if (proto::frame_type(frame) != "stdout_request") return;
    self.push_frame(Json{{"type", "host_call"}, {"id", "c1"}, {"method", "ping"}});
    self.push_frame(Json{{"type", "stdout_text"}, {"id", frame["id"]}, {"text", "whole"}});
  });
  // A declared stream whose chunk is missing: the host asks for the text.
  Json response = response_frame(o4s::testing::kCellId);
  response.erase("stdout");
  response["stdout_stream"] = Json{{"stream", 1}, {"chunks", 1}, {"head_trim", 0}};
  h.transport->push_frame(response);
  auto result = h.execute();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value()["stdout"], "whole");
  auto served = h.transport->written_frames_of_type("host_response");
  ASSERT_EQ(served.size(), 1U);
  const Json pong{{"pong", true}};
  EXPECT_EQ(served[0]["data"], pong);
  EXPECT_EQ(h.manager->mismatched_streams(), 1U);
}

}  // namespace
}  // namespace o4s::kernel
