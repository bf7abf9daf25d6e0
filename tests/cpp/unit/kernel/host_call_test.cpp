// Servicing a worker's host_call (spec kernel.md §5.6): the dispatcher's
// result is translated into exactly one host_response, and the execute loop
// never dies from a dispatcher error.
#include <gtest/gtest.h>

#include "support/manager_harness.h"

namespace o4s::kernel {
namespace {

using o4s::testing::kCellId;
using o4s::testing::ManagerHarness;
using o4s::testing::response_frame;
using proto::Json;

Json host_call(const Json& args = Json::array(), const std::string& method = "save") {
  return Json{{"type", "host_call"}, {"id", "hc-1-1"}, {"method", method}, {"args", args}};
}

// Runs one cell in which the worker makes `call`, and returns the single
// host_response the manager wrote.
Json reply_to(ManagerHarness& h, const Json& call) {
  h.transport->push_frame(call);
  h.transport->push_frame(response_frame());
  auto result = h.execute();
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  auto replies = h.transport->written_frames_of_type("host_response");
  EXPECT_EQ(replies.size(), 1U);
  return replies.empty() ? Json() : replies.front();
}

TEST(HostCallTest, SingleKeyErrorDictIsASoftFailure) {
  ManagerHarness h;
  h.hooks->answer(Json{{"error", "soft failure from host"}});
  h.started();
  Json reply = reply_to(h, host_call());
  EXPECT_EQ(
      reply,
      (Json{{"type", "host_response"}, {"id", "hc-1-1"}, {"error", "soft failure from host"}}));
}

TEST(HostCallTest, ErrorWithSiblingsIsOrdinaryData) {
  ManagerHarness h;
  Json data{{"error", "partial"}, {"rows", 3}};
  h.hooks->answer(data);
  h.started();
  Json reply = reply_to(h, host_call());
  EXPECT_EQ(reply, (Json{{"type", "host_response"}, {"id", "hc-1-1"}, {"data", data}}));
}

TEST(HostCallTest, NullDataRoundTripsAsData) {
  ManagerHarness h;
  h.hooks->answer(Json(nullptr));
  h.started();
  Json reply = reply_to(h, host_call());
  ASSERT_TRUE(reply.contains("data"));
  EXPECT_TRUE(reply["data"].is_null());
  EXPECT_FALSE(reply.contains("error"));
}

TEST(HostCallTest, NonObjectDataIsReturnedAsIs) {
  for (const Json& data :
       {Json::array({1, "two"}), Json("text"), Json(3.5), Json::object(), Json{{"ok", true}}}) {
    ManagerHarness h;
    h.hooks->answer(data);
    h.started();
    Json reply = reply_to(h, host_call());
    EXPECT_EQ(reply["data"], data);
    EXPECT_FALSE(reply.contains("error"));
  }
}

TEST(HostCallTest, DispatcherRaisingBecomesAnErrorReply) {
  ManagerHarness h;
  h.hooks->answer(DispatchRaised{"unknown method nope"});
  h.started();
  Json reply = reply_to(h, host_call(Json::array(), "nope"));
  EXPECT_EQ(reply,
            (Json{{"type", "host_response"}, {"id", "hc-1-1"}, {"error", "unknown method nope"}}));
}

TEST(HostCallTest, NoDispatcherConfigured) {
  ManagerHarness h;  // FakeHooks without a dispatcher reports NoDispatcher
  h.started();
  Json reply = reply_to(h, host_call());
  EXPECT_EQ(reply["error"], "no host dispatcher configured");
  EXPECT_FALSE(reply.contains("data"));
}

TEST(HostCallTest, NoHooksAtAllMeansNoDispatcher) {
  ManagerHarness h;
  h.started(nullptr);
  Json reply = reply_to(h, host_call());
  EXPECT_EQ(reply["error"], "no host dispatcher configured");
}

TEST(HostCallTest, DispatcherSeesMethodArgsAndTheAuthorizationGeneration) {
  ManagerHarness h;
  h.hooks->answer(Json("ok"));
  h.started();
  reply_to(h, host_call(Json::array({"a", 1}), "save_artifact"));
  auto calls = h.hooks->calls();
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].method, "save_artifact");
  EXPECT_EQ(calls[0].args, Json::array({"a", 1}));
  EXPECT_EQ(calls[0].authorization_generation, h.manager->authorization_generation());
  EXPECT_EQ(calls[0].authorization_generation.rfind("kernel:", 0), 0U);
}

TEST(HostCallTest, MissingFieldsGetTheirDefaults) {
  ManagerHarness h;
  h.hooks->answer(Json("ok"));
  h.started();
  // No id, no method, args null: method "", args [], id echoed as null.
  Json reply = reply_to(h, Json{{"type", "host_call"}, {"args", nullptr}});
  auto calls = h.hooks->calls();
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].method, "");
  EXPECT_EQ(calls[0].args, Json::array());
  ASSERT_TRUE(reply.contains("id"));
  EXPECT_TRUE(reply["id"].is_null());
}

TEST(HostCallTest, NonStringIdIsEchoedUnchanged) {
  ManagerHarness h;
  h.hooks->answer(Json("ok"));
  h.started();
  Json reply = reply_to(h, Json{{"type", "host_call"}, {"id", 17}, {"method", "m"}});
  EXPECT_EQ(reply["id"], 17);
}

TEST(HostCallTest, SeveralCallsInOneCellAreAnsweredInOrder) {
  ManagerHarness h;
  int n = 0;
  h.hooks->set_dispatcher(
      [&n](const std::string&, const Json&) -> DispatchOutcome { return Json(++n); });
  h.started();
  for (int i = 1; i <= 3; ++i) {
    h.transport->push_frame(Json{{"type", "host_call"}, {"id", "hc-" + std::to_string(i)}});
  }
  h.transport->push_frame(response_frame());
  ASSERT_TRUE(h.execute().ok());
  auto replies = h.transport->written_frames_of_type("host_response");
  ASSERT_EQ(replies.size(), 3U);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(replies[static_cast<std::size_t>(i)]["id"], "hc-" + std::to_string(i + 1));
    EXPECT_EQ(replies[static_cast<std::size_t>(i)]["data"], i + 1);
  }
}

TEST(HostCallTest, FailedReplyWriteEndsTheCellWithThatError) {
  ManagerHarness h;
  h.hooks->answer(Json("ok"));
  h.started();
  h.transport->push_frame(host_call());
  h.transport->push_frame(response_frame());
  // The execute frame goes out; the host_response write then fails.
  h.transport->set_responder([](const Json& frame, o4s::testing::FakeTransport& t) {
    if (proto::frame_type(frame) == "execute") t.fail_writes(system_error("write", EPIPE));
  });
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().sys_errno, EPIPE);
}

TEST(HostCallTest, OverriddenServiceSeamReplacesTheNativeTranslation) {
  ManagerHarness h;
  std::vector<Json> seen;
  h.hooks->override_seam(KernelHooks::Seam::kServiceHostCall, true);
  h.hooks->service_host_call_fn = [&seen](const Json& frame) -> Status {
    seen.push_back(frame);
    return {};
  };
  h.started();
  h.transport->push_frame(host_call(Json::array({1})));
  h.transport->push_frame(response_frame());
  ASSERT_TRUE(h.execute().ok());
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0]["id"], "hc-1-1");
  EXPECT_TRUE(h.transport->written_frames_of_type("host_response").empty());
  EXPECT_TRUE(h.hooks->calls().empty());
}

TEST(HostCallTest, NativeServiceCanBeCalledDirectly) {
  // What an embedder's override falls back to.
  ManagerHarness h;
  h.hooks->answer(Json{{"error", "nope"}});
  h.started();
  ASSERT_TRUE(h.manager->native_service_host_call(host_call()).ok());
  auto replies = h.transport->written_frames_of_type("host_response");
  ASSERT_EQ(replies.size(), 1U);
  EXPECT_EQ(replies[0]["error"], "nope");
}

}  // namespace
}  // namespace o4s::kernel
