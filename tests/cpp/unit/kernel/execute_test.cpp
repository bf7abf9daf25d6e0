// The execute transaction's host loop (spec kernel.md §3.6, §3.8, §5.5)
// against scripted frames.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "proto/limits.h"
#include "support/manager_harness.h"

namespace o4s::kernel {
namespace {

using o4s::testing::FakeTransport;
using o4s::testing::kCellId;
using o4s::testing::ManagerHarness;
using o4s::testing::RecordingSink;
using o4s::testing::response_frame;
using proto::Json;

Json chunk(const std::string& text, const Json& id = kCellId) {
  Json frame{{"type", "stdout_chunk"}, {"text", text}};
  if (!id.is_null()) frame["id"] = id;
  return frame;
}

Json log_frame(const Json& msg) { return Json{{"type", "log"}, {"msg", msg}}; }

TEST(ExecuteTest, SendsOneExecuteFrameAndReturnsTheResponse) {
  ManagerHarness h;
  h.started();
  Json response = response_frame();
  response["stdout"] = "2\n";
  h.transport->push_frame(response);
  auto result = h.manager->execute("1+1", "system", std::string("my-cell"), nullptr);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value()["stdout"], "2\n");
  auto sent = h.transport->written_frames_of_type("execute");
  ASSERT_EQ(sent.size(), 1U);
  EXPECT_EQ(sent[0], (Json{{"type", "execute"},
                           {"id", "my-cell"},
                           {"code", "1+1"},
                           {"origin", "system"},
                           {"seq", 1}}));
}

TEST(ExecuteTest, AutomaticCellIdsAreFreshUuids) {
  ManagerHarness h;
  h.started();
  const std::regex uuid("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  std::set<std::string> ids;
  for (auto explicit_id : {std::optional<std::string>(), std::optional<std::string>("")}) {
    h.transport->push_frame(response_frame());
    ASSERT_TRUE(h.manager->execute("x", "agent", explicit_id, nullptr).ok());
  }
  for (const auto& frame : h.transport->written_frames_of_type("execute")) {
    std::string id = frame["id"];
    EXPECT_TRUE(std::regex_match(id, uuid)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 2U);
}

TEST(ExecuteTest, AResponseForAnotherCellIsDroppedAndCounted) {
  // Deviation from the reference (spec §3.6 checks no id): a cell that
  // writes a forged response onto the protocol pipe must not shift every
  // later result by one cell.
  ManagerHarness h;
  h.started();
  h.transport->push_frame(response_frame("someone-else"));
  h.transport->push_frame(response_frame());
  auto result = h.execute();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value()["id"], kCellId);
  EXPECT_EQ(h.manager->stale_responses(), 1U);
}

TEST(ExecuteTest, ChunksAreDeliveredAndFillAnEmptyStdout) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(chunk("a"));
  h.transport->push_frame(chunk(""));  // empty text: neither delivered nor kept
  h.transport->push_frame(chunk("b\n"));
  h.transport->push_frame(response_frame());
  RecordingSink sink;
  auto result = h.execute("x", &sink);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(sink.chunks, (std::vector<std::string>{"a", "b\n"}));
  EXPECT_EQ(result.value()["stdout"], "ab\n");
}

TEST(ExecuteTest, ChunksFillMissingOrNullStdout) {
  for (bool null_stdout : {false, true}) {
    ManagerHarness h;
    h.started();
    h.transport->push_frame(chunk("x"));
    Json response{{"type", "response"}, {"id", kCellId}};
    if (null_stdout) response["stdout"] = nullptr;
    h.transport->push_frame(response);
    auto result = h.execute();
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result.value()["stdout"], "x");
  }
}

Json stream_chunk(const std::string& text, int stream, int seq) {
  Json frame = chunk(text);
  frame["stream"] = stream;
  frame["seq"] = seq;
  return frame;
}

Json declared_response(int stream, int chunks, int head_trim = 0) {
  Json response = response_frame();
  response["stdout"] = "";
  response["stdout_stream"] =
      Json{{"stream", stream}, {"chunks", chunks}, {"head_trim", head_trim}};
  return response;
}

TEST(ExecuteTest, ADeclaredStreamIsRebuiltFromItsChunksOnly) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(stream_chunk("0123456789", 5, 0));
  h.transport->push_frame(stream_chunk("stale buffer\n", 4, 0));  // same cell id, older stream
  h.transport->push_frame(stream_chunk("\n...(marker naming a file)", 5, 1));
  h.transport->push_frame(declared_response(5, 2, 4));
  RecordingSink sink;
  auto result = h.execute("x", &sink);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value()["stdout"], "012345\n...(marker naming a file)");
  EXPECT_FALSE(result.value().contains("stdout_stream"));
  // Live delivery is unchanged: every chunk of this cell id, as it came.
  EXPECT_EQ(sink.chunks.size(), 3U);
  EXPECT_TRUE(h.transport->written_frames_of_type("stdout_request").empty());
  EXPECT_EQ(h.manager->mismatched_streams(), 0U);
}

TEST(ExecuteTest, ChunksThatDoNotAddUpMakeTheHostAskForTheText) {
  // A missing chunk, a duplicate (a forked child writing through the same
  // buffer), one out of order, or fewer than declared.
  const std::vector<std::vector<int>> sequences{{0, 2}, {0, 1, 1}, {1, 0}, {0}};
  for (const auto& seqs : sequences) {
    ManagerHarness h;
    h.started();
    for (int seq : seqs) h.transport->push_frame(stream_chunk("part", 9, seq));
    h.transport->push_frame(declared_response(9, 2));
    h.transport->push_frame(chunk("late stale chunk"));
    h.transport->push_frame(
        Json{{"type", "stdout_text"}, {"id", "another cell"}, {"text", "not this one"}});
    h.transport->push_frame(Json{
        {"type", "stdout_text"}, {"id", o4s::testing::kCellId}, {"text", "the captured text"}});
    auto result = h.execute();
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result.value()["stdout"], "the captured text");
    auto asked = h.transport->written_frames_of_type("stdout_request");
    ASSERT_EQ(asked.size(), 1U);
    EXPECT_EQ(asked[0]["id"], o4s::testing::kCellId);
    EXPECT_EQ(h.manager->mismatched_streams(), 1U);
  }
}

TEST(ExecuteTest, AWorkerThatCannotAnswerIsAnErrorNotUncheckedText) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(stream_chunk("a", 3, 0));
  h.transport->push_frame(declared_response(3, 2));
  h.transport->push_frame(Json{{"type", "stdout_text"},
                               {"id", o4s::testing::kCellId},
                               {"text", ""},
                               {"error", "no stdout kept for this cell"}});
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  auto tail = h.manager->worker_log_tail();
  ASSERT_FALSE(tail.empty());
  EXPECT_NE(tail.back().find("could not recover"), std::string::npos);
}

TEST(ExecuteTest, AWorkerDyingBeforeItsStdoutTextIsAWorkerExit) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(stream_chunk("\n", 3, 1));  // chunk 0 never arrived
  h.transport->push_frame(declared_response(3, 2));
  // ...and then the stream ends.
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kWorkerExited);
}

TEST(ExecuteTest, AMalformedDeclarationIsRemovedAndTheSpecRuleApplies) {
  for (Json declaration : {Json("x"), Json{{"stream", "s"}, {"chunks", 1}},
                           Json{{"stream", 1}, {"chunks", -1}}, Json{{"stream", 1}}}) {
    ManagerHarness h;
    h.started();
    h.transport->push_frame(stream_chunk("abc", 1, 0));
    Json response = response_frame();
    response["stdout"] = "";
    response["stdout_stream"] = declaration;
    h.transport->push_frame(response);
    auto result = h.execute();
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result.value()["stdout"], "abc") << declaration.dump();
    EXPECT_FALSE(result.value().contains("stdout_stream"));
  }
}

TEST(ExecuteTest, NonEmptyStdoutInTheResponseWins) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(chunk("streamed"));
  Json response = response_frame();
  response["stdout"] = "captured";
  h.transport->push_frame(response);
  auto result = h.execute();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value()["stdout"], "captured");
}

TEST(ExecuteTest, StaleChunksAreDroppedAndCounted) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(chunk("old cell\n", "cell-0"));
  h.transport->push_frame(chunk("no id\n", nullptr));
  h.transport->push_frame(chunk("numeric id\n", 7));
  h.transport->push_frame(chunk("mine\n"));
  h.transport->push_frame(response_frame());
  RecordingSink sink;
  auto result = h.execute("x", &sink);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(sink.chunks, (std::vector<std::string>{"mine\n"}));
  EXPECT_EQ(result.value()["stdout"], "mine\n");
  EXPECT_EQ(h.manager->stale_stdout_chunks(), 3U);

  // The counter is never reset.
  h.transport->push_frame(chunk("late\n", "cell-0"));
  h.transport->push_frame(response_frame());
  ASSERT_TRUE(h.execute().ok());
  EXPECT_EQ(h.manager->stale_stdout_chunks(), 4U);
}

TEST(ExecuteTest, SinkErrorIsReportedAfterTheResponseAndStopsDelivery) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(chunk("1"));
  h.transport->push_frame(chunk("2"));
  h.transport->push_frame(chunk("3"));
  h.transport->push_frame(response_frame());
  RecordingSink sink;
  sink.fail_at = 1;
  auto result = h.execute("x", &sink);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(sink.chunks, (std::vector<std::string>{"1", "2"}));
  // The response was consumed, so the protocol is still aligned.
  Json next = response_frame();
  next["stdout"] = "next";
  h.transport->push_frame(next);
  auto again = h.execute();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value()["stdout"], "next");
}

TEST(ExecuteTest, LogFramesFeedTheBoundedWorkerLogTail) {
  ManagerHarness h;
  h.started();
  const std::size_t kLogs = proto::kWorkerLogTailEntries + 8;
  for (std::size_t i = 0; i < kLogs; ++i)
    h.transport->push_frame(log_frame("msg " + std::to_string(i)));
  h.transport->push_frame(log_frame(std::string(5000, 'L')));
  h.transport->push_frame(log_frame(""));          // empty: ignored
  h.transport->push_frame(log_frame(42));          // not a string: ignored
  h.transport->push_frame(Json{{"type", "log"}});  // no msg: ignored
  h.transport->push_frame(response_frame());
  ASSERT_TRUE(h.execute().ok());
  auto tail = h.manager->worker_log_tail();
  ASSERT_EQ(tail.size(), proto::kWorkerLogTailEntries);
  EXPECT_EQ(tail.back(), std::string(proto::kWorkerLogEntryChars, 'L'));
  EXPECT_EQ(tail.front(), "msg " + std::to_string(kLogs - proto::kWorkerLogTailEntries + 1));
  EXPECT_EQ(tail[tail.size() - 2], "msg " + std::to_string(kLogs - 1));
}

TEST(ExecuteTest, MalformedFramesAreCountedAndSkipped) {
  ManagerHarness h;
  h.started();
  h.transport->push_line("Traceback (most recent call last):\n");
  h.transport->push_line("{\"type\": \"response\"\n");  // cut JSON
  h.transport->push_error(
      make_error(ErrorCode::kProtocol, "oversized frame dropped (over the frame cap)"));
  Json response = response_frame();
  response["stdout"] = "survived";
  h.transport->push_frame(response);
  auto result = h.execute();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value()["stdout"], "survived");
  EXPECT_EQ(h.manager->malformed_frames(), 3U);
  auto tail = h.manager->worker_log_tail();
  ASSERT_EQ(tail.size(), 3U);
  EXPECT_EQ(tail[0], "host dropped a malformed worker frame (not JSON)");
  EXPECT_EQ(tail[2], "host dropped a worker frame: oversized frame dropped (over the frame cap)");
}

TEST(ExecuteTest, EmptyAndUnknownFramesAreIgnored) {
  ManagerHarness h;
  h.started();
  h.transport->push_line("   \n");  // whitespace-only: the empty frame
  h.transport->push_line("[1, 2]\n");
  h.transport->push_line("42\n");
  h.transport->push_frame(Json{{"type", "variables_response"}, {"id", "x"}});
  h.transport->push_frame(Json{{"type", 5}});
  h.transport->push_frame(response_frame());
  ASSERT_TRUE(h.execute().ok());
  EXPECT_EQ(h.manager->malformed_frames(), 0U);
}

TEST(ExecuteTest, SidecarEventIsReducedToAFixedMarker) {
  ManagerHarness h;
  h.started();
  h.transport->push_frame(Json{
      {"type", "skill_sidecar_load"}, {"id", kCellId}, {"event", {{"path", "/secret/place"}}}});
  Json response = response_frame();
  response["skill_sidecar_loads"] = Json::array({{{"worker", "claims"}}});
  h.transport->push_frame(response);
  auto result = h.execute();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value()["skill_sidecar_loads"],
            Json::array({{{"event", "untrusted_worker_sidecar_event"}}}));
  EXPECT_EQ(result.value().dump().find("/secret/place"), std::string::npos);
}

TEST(ExecuteTest, WorkerSuppliedSidecarLoadsAreRemovedWithoutAnEvent) {
  ManagerHarness h;
  h.started();
  Json response = response_frame();
  response["skill_sidecar_loads"] = Json::array({{{"forged", true}}});
  h.transport->push_frame(response);
  auto result = h.execute();
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result.value().contains("skill_sidecar_loads"));
}

TEST(ExecuteTest, CwdAnnotation) {
  {
    ManagerHarness h;
    h.started();
    h.transport->push_frame(response_frame());
    auto result = h.execute();
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result.value()["cwd"], "None");  // the reference's str(None)
  }
  {
    ManagerHarness h;
    h.options.cwd = "/srv/space";
    h.started();
    h.transport->push_frame(response_frame());
    auto result = h.execute();
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result.value()["cwd"], "/srv/space");
    // A cwd the response already carries is left alone.
    Json response = response_frame();
    response["cwd"] = "/elsewhere";
    h.transport->push_frame(response);
    auto again = h.execute();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value()["cwd"], "/elsewhere");
  }
}

TEST(ExecuteTest, EndOfStreamIsAWorkerExitWithTheStderrTail) {
  ManagerHarness h;
  h.started();
  h.transport->set_stderr(StderrSnapshot{"Segmentation fault\n", 19, 19, 0, true});
  h.transport->push_frame(chunk("partial"));
  h.transport->push_end_of_stream();
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kWorkerExited);
  EXPECT_EQ(result.error().message, "kernel worker exited unexpectedly: Segmentation fault\n");
  // The last words are also kept with the worker's log.
  auto tail = h.manager->worker_log_tail();
  ASSERT_FALSE(tail.empty());
  EXPECT_EQ(tail.back(), "worker exited; its stderr ended with: Segmentation fault\n");
}

TEST(ExecuteTest, WorkerIsReportedDeadOnceItsExitIsReported) {
  // The protocol pipe reaches end of stream a moment before the dying
  // process is reported as exited; the caller who just got "exited
  // unexpectedly" must not then see is_alive() == true.
  ManagerHarness h;
  h.started();
  h.transport->set_exit_lag(3);
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kWorkerExited);
  EXPECT_FALSE(h.manager->is_alive());
}

TEST(ExecuteTest, TruncatedTailIsAnnotated) {
  ManagerHarness h;
  h.started();
  h.transport->set_stderr(StderrSnapshot{"...end", 65536, 100000, 34464, true});
  auto result = h.execute();  // nothing scripted: end of stream
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "kernel worker exited unexpectedly: ...end (stderr tail: 65536 of 100000 bytes kept, "
            "34464 dropped)");
}

TEST(ExecuteTest, InvalidUtf8InTheTailIsReplaced) {
  ManagerHarness h;
  h.started();
  h.transport->set_stderr(StderrSnapshot{std::string("bad \xFF byte"), 10, 10, 0, true});
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "kernel worker exited unexpectedly: bad \xEF\xBF\xBD byte");
}

TEST(ExecuteTest, TransportWithoutAStderrView) {
  ManagerHarness h;
  h.started();
  h.transport->set_stderr(std::nullopt);
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kWorkerExited);
  EXPECT_EQ(result.error().message, "kernel worker exited unexpectedly");
}

TEST(ExecuteTest, SilentDeathSaysHowTheWorkerEnded) {
  // Nothing on stderr (a SIGKILL, an OOM kill): the exit status is the only
  // clue, so it goes into the message instead of an empty tail.
  const std::vector<std::pair<int, std::string>> cases = {
      {-9, "kernel worker exited unexpectedly (killed by signal 9)"},
      {3, "kernel worker exited unexpectedly (exit status 3)"},
  };
  for (const auto& [status, message] : cases) {
    ManagerHarness h;
    h.started();
    h.transport->set_exit_status(status);
    auto result = h.execute();
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().message, message);
  }
}

TEST(ExecuteTest, StderrTextWinsOverTheExitStatus) {
  ManagerHarness h;
  h.started();
  h.transport->set_stderr(StderrSnapshot{"MemoryError\n", 12, 12, 0, true});
  h.transport->set_exit_status(1);
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "kernel worker exited unexpectedly: MemoryError\n");
}

TEST(ExecuteTest, ReadErrorIsReturned) {
  ManagerHarness h;
  h.started();
  h.transport->push_error(system_error("read protocol pipe", EIO));
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kSystem);
  EXPECT_EQ(result.error().sys_errno, EIO);
}

TEST(ExecuteTest, NotAliveFailsBeforeSendingAnything) {
  ManagerHarness h;
  h.started();
  const std::size_t before = h.transport->written_lines().size();
  h.transport->set_alive(false);
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kNotAlive);
  EXPECT_EQ(result.error().message, "kernel worker is not alive");
  EXPECT_EQ(h.transport->written_lines().size(), before);
}

TEST(ExecuteTest, NeverStartedKernelIsNotAlive) {
  ManagerHarness h;
  h.make();
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kNotAlive);
}

TEST(ExecuteTest, SendFailureIsReturned) {
  ManagerHarness h;
  h.started();
  h.transport->fail_writes(system_error("write protocol pipe", EPIPE));
  auto result = h.execute();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().sys_errno, EPIPE);
}

TEST(ExecuteTest, OverriddenReadlineAndSendSeamsCarryTheTransaction) {
  ManagerHarness h;
  h.started();
  std::vector<Json> sent;
  // The seam bypasses the fake transport, so the response names the cell.
  std::deque<Json> script = {chunk("via seam"), response_frame(kCellId)};
  h.hooks->override_seam(KernelHooks::Seam::kSend, true);
  h.hooks->override_seam(KernelHooks::Seam::kReadline, true);
  h.hooks->send_fn = [&sent](const Json& frame) -> Status {
    sent.push_back(frame);
    return {};
  };
  h.hooks->readline_fn = [&script]() -> Result<std::optional<Json>> {
    if (script.empty()) return std::optional<Json>();
    Json next = script.front();
    script.pop_front();
    return std::optional<Json>(next);
  };
  const std::size_t before = h.transport->written_lines().size();
  auto result = h.execute();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value()["stdout"], "via seam");
  ASSERT_EQ(sent.size(), 1U);
  EXPECT_EQ(proto::frame_type(sent[0]), "execute");
  EXPECT_EQ(h.transport->written_lines().size(), before);  // the native path was bypassed
}

}  // namespace
}  // namespace o4s::kernel
