// One-frame worker requests behind a fence (worker_request.cpp) and the
// cell frames of contracts.md (cell_frames.cpp), against scripted workers.
#include <gtest/gtest.h>

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
