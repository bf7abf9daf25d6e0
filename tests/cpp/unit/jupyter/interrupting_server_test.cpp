// stop_on_error skips only the requests queued before the failed cell's
// reply left (interrupting_server.h). The inner server here stands for
// xeus's ZeroMQ server: a queue of shell requests waiting in the socket,
// and a record of what was sent in which order.
#include "jupyter/interrupting_server.h"

#include <gtest/gtest.h>

#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace o4s::jupyter {
namespace {

xeus::xmessage request(const std::string& type, nl::json msg_id, nl::json content) {
  return xeus::xmessage({"client"}, {{"msg_type", type}, {"msg_id", std::move(msg_id)}},
                        nl::json::object(), nl::json::object(), std::move(content),
                        xeus::buffer_sequence());
}

xeus::xmessage execute_request(const std::string& msg_id, nl::json content) {
  return request("execute_request", msg_id, std::move(content));
}

nl::json cell(const std::string& code, bool stop_on_error = true) {
  return {{"code", code}, {"stop_on_error", stop_on_error}};
}

class QueueingInner : public xeus::xserver {
 public:
  std::deque<xeus::xmessage> waiting;  // shell requests not read yet
  std::vector<std::string> events;     // in the order they happened

  void arrive(xeus::xmessage m) { notify_shell_listener(std::move(m)); }

 private:
  xeus::xcontrol_messenger& get_control_messenger_impl() override {
    throw std::logic_error("not used");
  }
  void send_shell_impl(xeus::xmessage m) override {
    const nl::json& id = m.parent_header()["msg_id"];
    events.push_back("reply " + (id.is_string() ? id.get<std::string>() : id.dump()) + " " +
                     m.content().value("status", ""));
  }
  void send_control_impl(xeus::xmessage) override {}
  void send_stdin_impl(xeus::xmessage) override {}
  void publish_impl(xeus::xpub_message, xeus::channel) override {}
  void start_impl(xeus::xpub_message) override {}
  void abort_queue_impl(const listener& l, long) override {
    while (!waiting.empty()) {
      xeus::xmessage m = std::move(waiting.front());
      waiting.pop_front();
      events.push_back("skipped " + m.header().value("msg_id", ""));
      l(std::move(m));
    }
  }
  void stop_impl() override {}
  void update_config_impl(xeus::xconfiguration&) const override {}
};

// What xeus 2.4's execute handler does: the reply first, then (after a
// failure with stop_on_error, in a cell it saw not silent) the drain. A
// client that saw the reply may send its next cell in between.
class ServerTest : public ::testing::Test {
 protected:
  ServerTest() {
    auto owned = std::make_unique<QueueingInner>();
    inner = owned.get();
    server = std::make_unique<InterruptingServer>(std::move(owned), ServerHooks{});
    server->register_shell_listener([this](xeus::xmessage m) { act_as_xeus(std::move(m)); });
  }

  void act_as_xeus(xeus::xmessage request) {
    const nl::json& content = request.content();
    if (request.header().value("msg_type", "") != "execute_request") {
      server->send_shell(xeus::xmessage({"client"}, {{"msg_type", "kernel_info_reply"}},
                                        request.header(), nl::json::object(), {{"status", "ok"}},
                                        xeus::buffer_sequence()));
      return;
    }
    const bool failed = content.value("code", "") == "fail";
    const std::string status = failed ? "error" : "ok";
    server->send_shell(xeus::xmessage({"client"}, {{"msg_type", "execute_reply"}}, request.header(),
                                      nl::json::object(), {{"status", status}},
                                      xeus::buffer_sequence()));
    if (failed) inner->waiting.push_back(execute_request("sent-on-seeing-it", cell("x")));
    if (failed && content.value("stop_on_error", false) && !content.value("silent", false)) {
      server->abort_queue([](xeus::xmessage) { FAIL() << "xeus's own abort answer"; }, 50);
    }
  }

  QueueingInner* inner = nullptr;
  std::unique_ptr<InterruptingServer> server;
};

TEST_F(ServerTest, OnlyWhatWasQueuedBeforeTheFailedReplyIsAborted) {
  inner->waiting.push_back(execute_request("queued", cell("x")));
  inner->arrive(execute_request("failing", cell("fail")));
  EXPECT_EQ(inner->events, (std::vector<std::string>{"skipped queued", "reply failing error",
                                                     "reply queued aborted"}));
  ASSERT_EQ(inner->waiting.size(), 1u);
  EXPECT_EQ(inner->waiting.front().header()["msg_id"], "sent-on-seeing-it");
}

TEST_F(ServerTest, AnUnstoredCellsFailureSkipsTheQueueToo) {
  inner->waiting.push_back(execute_request("queued", cell("x")));
  nl::json unstored = cell("fail");
  unstored["store_history"] = false;
  inner->arrive(execute_request("failing", unstored));
  EXPECT_EQ(inner->events, (std::vector<std::string>{"skipped queued", "reply failing error",
                                                     "reply queued aborted"}));
}

TEST_F(ServerTest, ASilentCellOrOneWithoutStopOnErrorSkipsNothing) {
  inner->waiting.push_back(execute_request("queued", cell("x")));
  nl::json silent = cell("fail");
  silent["silent"] = true;
  inner->arrive(execute_request("silent", silent));
  inner->arrive(execute_request("carry-on", cell("fail", /*stop_on_error=*/false)));
  EXPECT_EQ(inner->events,
            (std::vector<std::string>{"reply silent error", "reply carry-on error"}));
  EXPECT_EQ(inner->waiting.size(), 3u);
}

TEST_F(ServerTest, OnlyCellsAreAbortedOtherQueuedRequestsAreAnsweredAfter) {
  inner->waiting.push_back(request("kernel_info_request", "info", nl::json::object()));
  inner->waiting.push_back(execute_request("queued", cell("x")));
  inner->arrive(execute_request("failing", cell("fail")));
  EXPECT_EQ(inner->events,
            (std::vector<std::string>{"skipped info", "skipped queued", "reply failing error",
                                      "reply info ok", "reply queued aborted"}));
}

TEST_F(ServerTest, ARequestWhoseIdIsNoStringIsServed) {
  inner->waiting.push_back(execute_request("queued", cell("x")));
  inner->arrive(request("execute_request", 5, cell("fail")));
  inner->arrive(request("execute_request", nullptr, cell("ok")));
  // Served, and its failure skips the queue as any other's.
  EXPECT_EQ(inner->events, (std::vector<std::string>{"skipped queued", "reply 5 error",
                                                     "reply queued aborted", "reply null ok"}));
}

TEST_F(ServerTest, ASucceedingCellSkipsNothing) {
  inner->waiting.push_back(execute_request("queued", cell("x")));
  inner->arrive(execute_request("fine", cell("ok")));
  EXPECT_EQ(inner->events, (std::vector<std::string>{"reply fine ok"}));
  EXPECT_EQ(inner->waiting.size(), 1u);
}

}  // namespace
}  // namespace o4s::jupyter
