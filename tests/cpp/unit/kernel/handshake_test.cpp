// The attestation initialization handshake (spec kernel.md §3.5, §5.4).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "proto/limits.h"
#include "support/manager_harness.h"

namespace o4s::kernel {
namespace {

using o4s::testing::FakeTransport;
using o4s::testing::ManagerHarness;
using proto::Json;
using namespace std::chrono_literals;

constexpr const char* kFailed = "kernel worker attestation initialization failed";

// A harness whose fake does not answer the handshake by itself; `answer`
// decides what the worker says after the initialize frame.
ManagerHarness manual(std::function<void(const Json& init, FakeTransport&)> answer) {
  ManagerHarness h;
  h.transport->set_auto_initialize(false);
  h.transport->set_responder([answer](const Json& frame, FakeTransport& t) {
    if (proto::frame_type(frame) == "initialize") answer(frame, t);
  });
  return h;
}

void expect_failed_and_closed(const ManagerHarness& h, const Status& status,
                              const std::string& message = kFailed) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kHandshake);
  EXPECT_EQ(status.error().message, message);
  // A failed handshake tears the worker down gracefully.
  EXPECT_GE(h.transport->close_calls(), 1);
  EXPECT_EQ(h.transport->last_close_graceful(), std::optional<bool>(true));
}

TEST(HandshakeTest, SucceedsOnAMatchingInitialized) {
  ManagerHarness h;
  auto& manager = h.make();
  ASSERT_TRUE(manager.start(5.0).ok());
  EXPECT_TRUE(manager.is_alive());
  EXPECT_EQ(h.transport->close_calls(), 0);
  EXPECT_EQ(h.transport->kill_calls(), 0);
}

TEST(HandshakeTest, InitializeFrameCarriesAFreshIdAndKey) {
  ManagerHarness h;
  ASSERT_TRUE(h.make().start(5.0).ok());
  auto frames = h.transport->written_frames();
  ASSERT_EQ(frames.size(), 1U);
  const Json& init = frames[0];
  EXPECT_EQ(init.size(), 3U);
  EXPECT_EQ(init["type"], "initialize");
  const std::regex id(
      "^initialize-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  EXPECT_TRUE(std::regex_match(init["id"].get<std::string>(), id)) << init["id"];
  // 32 random bytes as 64 lowercase hex chars.
  const std::regex key("^[0-9a-f]{64}$");
  EXPECT_TRUE(std::regex_match(init["skill_attestation_key"].get<std::string>(), key));

  ManagerHarness other;
  ASSERT_TRUE(other.make().start(5.0).ok());
  Json second = other.transport->written_frames()[0];
  EXPECT_NE(second["id"], init["id"]);
  EXPECT_NE(second["skill_attestation_key"], init["skill_attestation_key"]);
}

TEST(HandshakeTest, InitializationErrorFails) {
  auto h = manual([](const Json& init, FakeTransport& t) {
    t.push_frame(Json{{"type", "initialization_error"},
                      {"id", init["id"]},
                      {"error", "invalid manager attestation handshake"}});
  });
  expect_failed_and_closed(h, h.make().start(5.0));
}

TEST(HandshakeTest, InitializedWithAnotherIdFails) {
  auto h = manual([](const Json&, FakeTransport& t) {
    t.push_frame(Json{{"type", "initialized"}, {"id", "initialize-someone-else"}});
  });
  expect_failed_and_closed(h, h.make().start(5.0));
}

TEST(HandshakeTest, AnyOtherFirstFrameFails) {
  for (const char* line : {"{}\n", "   \n", "[1]\n", "{\"type\":\"response\",\"id\":\"x\"}\n"}) {
    auto h = manual([line](const Json&, FakeTransport& t) { t.push_line(line); });
    expect_failed_and_closed(h, h.make().start(5.0));
  }
}

TEST(HandshakeTest, UpToEightLogFramesMayPrecedeTheReply) {
  auto h = manual([](const Json& init, FakeTransport& t) {
    for (std::size_t i = 0; i < proto::kLogFramesSkippedLimit; ++i) {
      t.push_frame(Json{{"type", "log"}, {"msg", "audit hook unavailable"}});
    }
    t.push_frame(Json{{"type", "initialized"}, {"id", init["id"]}});
  });
  EXPECT_TRUE(h.make().start(5.0).ok());
}

TEST(HandshakeTest, NinthLogFrameFails) {
  auto h = manual([](const Json& init, FakeTransport& t) {
    for (std::size_t i = 0; i < proto::kLogFramesSkippedLimit + 1; ++i) {
      t.push_frame(Json{{"type", "log"}, {"msg", "noise"}});
    }
    t.push_frame(Json{{"type", "initialized"}, {"id", init["id"]}});
  });
  expect_failed_and_closed(h, h.make().start(5.0));
}

TEST(HandshakeTest, EndOfStreamFails) {
  auto h = manual([](const Json&, FakeTransport& t) { t.push_end_of_stream(); });
  expect_failed_and_closed(h, h.make().start(5.0));
}

// A native failure has no foreign cause to chain, so its words must be in
// the message rather than lost.
TEST(HandshakeTest, ReadErrorFails) {
  auto h = manual([](const Json&, FakeTransport& t) { t.push_error(system_error("read", EIO)); });
  expect_failed_and_closed(h, h.make().start(5.0), std::string(kFailed) + ": read: EIO");
}

TEST(HandshakeTest, WriteErrorFails) {
  ManagerHarness h;
  h.transport->fail_writes(system_error("write protocol pipe", EPIPE));
  expect_failed_and_closed(h, h.make().start(5.0),
                           std::string(kFailed) + ": write protocol pipe: EPIPE");
}

TEST(HandshakeTest, FailureCarriesTheCauseOfTheUnderlyingError) {
  struct Cause : ErrorCause {};
  auto cause = std::make_shared<Cause>();
  auto h = manual([cause](const Json&, FakeTransport& t) {
    Error error = make_error(ErrorCode::kCancelled, "readline override raised");
    error.cause = cause;
    t.push_error(error);
  });
  Status status = h.make().start(5.0);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().cause, cause);
}

TEST(HandshakeTest, DeadlineKillsTheBlockedReader) {
  // The worker never answers and the read blocks, as a pipe read would: only
  // the deadline's transport->kill() can wake it.
  ManagerHarness h;
  h.transport->set_auto_initialize(false);
  h.transport->set_when_empty(FakeTransport::WhenEmpty::kBlock);
  auto& manager = h.make();
  auto begin = std::chrono::steady_clock::now();
  Status status = manager.start(0.05);
  auto elapsed = std::chrono::steady_clock::now() - begin;
  expect_failed_and_closed(h, status, std::string(kFailed) + " after 0.05s deadline");
  EXPECT_GE(h.transport->kill_calls(), 1);
  EXPECT_GE(elapsed, 50ms);
  EXPECT_LT(elapsed, 5s);
}

TEST(HandshakeTest, FailureBeforeTheDeadlineHasNoDeadlineSuffix) {
  ManagerHarness h;
  h.transport->set_auto_initialize(false);
  h.transport->set_when_empty(FakeTransport::WhenEmpty::kBlock);
  // Kill from outside well before the deadline: no " after" suffix then.
  auto& manager = h.make();
  std::thread killer([&h] {
    ASSERT_TRUE(h.transport->wait_for_blocked_reader(5s));
    h.transport->kill();
  });
  Status status = manager.start(15.0);
  killer.join();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, kFailed);
}

TEST(HandshakeTest, ArgvWorkerSkipsTheHandshake) {
  ManagerHarness h;
  h.options.argv = std::vector<std::string>{"Rscript", "r_worker.R"};
  h.transport->set_auto_initialize(false);
  ASSERT_TRUE(h.make().start(0.05).ok());
  EXPECT_TRUE(h.transport->written_lines().empty());
}

TEST(HandshakeTest, FactoryErrorIsReturnedFromStart) {
  ManagerHarness h;
  h.factory = std::make_shared<o4s::testing::FakeTransportFactory>(
      make_error(ErrorCode::kSystem, "dial failed"));
  Status status = h.make().start(5.0);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "dial failed");
  EXPECT_FALSE(h.manager->is_alive());
}

}  // namespace
}  // namespace o4s::kernel
