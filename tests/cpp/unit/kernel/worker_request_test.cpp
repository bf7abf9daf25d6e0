// One-frame worker requests behind a fence (worker_request.cpp) and the
// cell frames of contracts.md (cell_frames.cpp), against scripted workers.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/manager_harness.h"

namespace o4s::kernel {
namespace {

using o4s::testing::FakeTransport;
using o4s::testing::kCellId;
using o4s::testing::ManagerHarness;
using o4s::testing::response_frame;
using proto::Json;

// Answers the fence as every worker does (an unknown cell's stdout), and
// `known` requests with a reply of the same id.
void answer_requests(ManagerHarness& h, bool knows_request) {
  h.transport->set_responder([knows_request](const Json& frame, FakeTransport& self) {
    std::string type = frame.value("type", "");
    if (type == "stdout_request") {
      self.push_frame(Json{{"type", "stdout_text"},
                           {"id", frame["id"]},
                           {"text", ""},
                           {"error", "no stdout kept for this cell"}});
    } else if (type == "is_complete" && knows_request) {
      self.push_frame(Json{{"type", "log"}, {"msg", "noise"}});
      self.push_frame(
          Json{{"type", "is_complete_reply"}, {"id", frame["id"]}, {"status", "incomplete"}});
    }
  });
}

TEST(WorkerRequestTest, AKnownRequestReturnsItsReply) {
  ManagerHarness h;
  h.started();
  answer_requests(h, true);
  auto answer = h.manager->worker_request(Json{{"type", "is_complete"}, {"code", "for x in y:"}});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  ASSERT_TRUE(answer.value().has_value());
  EXPECT_EQ((*answer.value())["status"], "incomplete");
  auto sent = h.transport->written_frames_of_type("is_complete");
  ASSERT_EQ(sent.size(), 1U);
  EXPECT_EQ(sent[0]["code"], "for x in y:");
}

TEST(WorkerRequestTest, AWorkerThatIgnoresTheRequestReadsAsUnsupported) {
  ManagerHarness h;
  h.started();
  answer_requests(h, false);
  auto answer = h.manager->worker_request(Json{{"type", "complete"}, {"code", "zi"}});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_FALSE(answer.value().has_value());
  // The channel is still aligned: a cell runs normally afterwards.
  h.transport->set_responder(nullptr);
  h.transport->push_frame(response_frame());
  EXPECT_TRUE(h.execute().ok());
}

TEST(WorkerRequestTest, ARequestWithoutATypeIsRefusedBeforeAnyFrame) {
  ManagerHarness h;
  h.started();
  auto answer = h.manager->worker_request(Json{{"code", "x"}});
  EXPECT_FALSE(answer.ok());
  EXPECT_TRUE(h.transport->written_frames_of_type("stdout_request").empty());
}

}  // namespace
}  // namespace o4s::kernel

namespace o4s::kernel {
namespace {

// A worker that stays silent after an idle request (neither its answer nor
// the fence's): each idle path stops it at the bound and says so, instead of
// waiting forever.
class SilentIdleWorkerTest : public ::testing::TestWithParam<std::string> {};

Result<Json> ask(KernelManager& manager, const std::string& what) {
  if (what == "is_complete") {
    auto answer = manager.worker_request(Json{{"type", "is_complete"}, {"code", "x"}});
    if (!answer) return std::move(answer).error();
    return answer.value().value_or(Json());
  }
  if (what == "complete") return manager.complete("pri", 3);
  if (what == "inspect") return manager.inspect_code("print", 5, 0);
  return manager.inspect_variables(10);
}

TEST_P(SilentIdleWorkerTest, IsStoppedAtTheBoundWithAClearError) {
  ManagerHarness h;
  h.options.idle_reply_timeout_s = 0.2;
  h.started();
  h.transport->set_when_empty(FakeTransport::WhenEmpty::kBlock);
  Result<Json> answer = ask(*h.manager, GetParam());
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kUnresponsive);
  EXPECT_NE(answer.error().message.find("did not answer"), std::string::npos)
      << answer.error().message;
  EXPECT_NE(answer.error().message.find("0.2s"), std::string::npos) << answer.error().message;
  EXPECT_GE(h.transport->kill_calls(), 1);
}

INSTANTIATE_TEST_SUITE_P(EveryIdleRequest, SilentIdleWorkerTest,
                         ::testing::Values("is_complete", "complete", "inspect", "variables"));

TEST(SilentIdleWorkerTest, AnAnswerInTimeLeavesTheWorkerRunning) {
  ManagerHarness h;
  h.options.idle_reply_timeout_s = 5.0;
  h.started();
  h.transport->set_responder([](const Json& frame, FakeTransport& self) {
    if (frame.value("type", "") == "complete") {
      self.push_frame(Json{{"type", "complete_reply"},
                           {"id", frame["id"]},
                           {"matches", Json::array({"print"})},
                           {"cursor_start", 0},
                           {"cursor_end", 3}});
    }
  });
  auto answer = h.manager->complete("pri", 3);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(h.transport->kill_calls(), 0);
}

TEST(SilentIdleWorkerTest, TheHostsOwnWaitOnAHostCallDoesNotCount) {
  ManagerHarness h;
  h.options.idle_reply_timeout_s = 0.2;
  // The dispatcher takes longer than the bound (a person deciding on an
  // approval); the worker answers at once after it.
  h.hooks->set_dispatcher([](const std::string&, const Json&) -> DispatchOutcome {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    return Json{{"ok", true}};
  });
  h.started();
  h.transport->set_responder([](const Json& frame, FakeTransport& self) {
    std::string type = frame.value("type", "");
    if (type == "complete") {
      self.push_frame(Json{
          {"type", "host_call"}, {"id", "call-1"}, {"method", "ping"}, {"args", Json::array()}});
      self.push_frame(Json{{"type", "complete_reply"},
                           {"id", frame["id"]},
                           {"matches", Json::array()},
                           {"cursor_start", 0},
                           {"cursor_end", 0}});
    }
  });
  auto answer = h.manager->complete("x", 1);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(h.transport->written_frames_of_type("host_response").size(), 1U);
  EXPECT_EQ(h.transport->kill_calls(), 0);
}

}  // namespace
}  // namespace o4s::kernel
