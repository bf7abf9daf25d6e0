#include "jupyter/interrupting_server.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <utility>
#include <xeus/xserver_control_main.hpp>

#include "jupyter/message_rewrite.h"
#include "jupyter/request_check.h"

namespace o4s::jupyter {

namespace {

ServerHooks& pending_hooks() {
  static ServerHooks hooks;
  return hooks;
}

// How long requests still on their way are waited for after a failed cell
// (stop_on_error), and in all.
constexpr std::chrono::milliseconds kSkipPause{50};
constexpr std::chrono::milliseconds kSkipAtMost{500};

// A header or content field that a client may have sent as any JSON type.
std::string string_field(const nl::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

InterruptingServer::InterruptingServer(std::unique_ptr<xeus::xserver> inner, ServerHooks hooks)
    : inner_(std::move(inner)), hooks_(std::move(hooks)) {
  // The inner server's threads call these; they forward to the listeners
  // xkernel registers on this object (registered later, before start).
  inner_->register_shell_listener([this](xeus::xmessage m) {
    deliver_shell(std::move(m));
    while (!skipped_.empty()) answer_aborted();
  });
  inner_->register_stdin_listener(
      [this](xeus::xmessage m) { notify_stdin_listener(std::move(m)); });
  inner_->register_internal_listener(
      [this](nl::json m) { return notify_internal_listener(std::move(m)); });
  inner_->register_control_listener([this](xeus::xmessage m) {
    if (rejected(m, xeus::channel::CONTROL)) return;
    // Delivered before xeus replies, so the cell is already being stopped
    // when the client sees interrupt_reply.
    if (hooks_.on_interrupt && m.header().value("msg_type", "") == "interrupt_request") {
      hooks_.on_interrupt();
    }
    notify_control_listener(std::move(m));
  });
}

void InterruptingServer::deliver_shell(xeus::xmessage m) {
  if (rejected(m, xeus::channel::SHELL)) return;
  if (m.header().value("msg_type", "") == "execute_request") {
    const bool unstored = shown_but_unstored(m);
    // Judged on the request as sent: an unstored cell reaches xeus silent,
    // but only a truly silent cell never skips the queue (as in ipykernel).
    skips_on_failure_.reset();
    if (m.content().value("stop_on_error", false) && !m.content().value("silent", false)) {
      skips_on_failure_ = string_field(m.header(), "msg_id");
    }
    if (hooks_.before_execute) hooks_.before_execute(unstored);
    if (unstored) m = as_uncounted(std::move(m));
  }
  notify_shell_listener(std::move(m));
}

bool InterruptingServer::rejected(const xeus::xmessage& request, xeus::channel channel) {
  const std::string type = request.header().value("msg_type", "");
  std::optional<std::string> problem = request_problem(type, request.content());
  if (!problem) return false;
  // Logged as well: the kernel's stderr is where a client's operator looks.
  std::fprintf(stderr, "openai4s-jupyter-kernel: rejected a malformed %s: %s\n", type.c_str(),
               problem->c_str());
  const std::string reply_type =
      type.size() > 8 && type.compare(type.size() - 8, 8, "_request") == 0
          ? type.substr(0, type.size() - 8) + "_reply"
          : type + "_reply";
  // busy, the reply, idle: what a client waiting on iopub for idle expects.
  inner_->publish(status_for(request, "busy"), channel);
  xeus::xmessage reply = reply_to(request, reply_type, bad_request_content(*problem));
  if (channel == xeus::channel::SHELL) {
    inner_->send_shell(std::move(reply));
  } else {
    inner_->send_control(std::move(reply));
  }
  inner_->publish(status_for(request, "idle"), channel);
  return true;
}

xeus::xcontrol_messenger& InterruptingServer::get_control_messenger_impl() {
  return inner_->get_control_messenger();
}
void InterruptingServer::send_shell_impl(xeus::xmessage message) {
  // stop_on_error skips the requests queued behind the failed cell, those
  // the client sent before it could see the failure. xeus drains the socket
  // after sending the reply, so a request sent on seeing the error reply
  // was skipped too when it came before the drain (a client that interrupts
  // a cell and runs the next one at once). The drain is done here instead,
  // just before the reply leaves.
  if (skips_on_failure_ && string_field(message.header(), "msg_type") == "execute_reply" &&
      string_field(message.parent_header(), "msg_id") == *skips_on_failure_ &&
      string_field(message.content(), "status") == "error") {
    skips_on_failure_.reset();
    skip_queued();
  }
  inner_->send_shell(std::move(message));
}

void InterruptingServer::skip_queued() {
  // Until the socket is empty, then again after a pause while that found
  // any: a client that sent several cells at once may still have some on
  // the way (xeus waited 50 ms after each one it took). Nothing that comes
  // meanwhile was sent after the reply, which has not left yet. Bounded, so
  // a client that keeps sending cannot hold the reply back.
  const auto give_up = std::chrono::steady_clock::now() + kSkipAtMost;
  for (;;) {
    const std::size_t before = skipped_.size();
    inner_->abort_queue([this](xeus::xmessage m) { skipped_.push_back(std::move(m)); },
                        /*polling_interval=*/0);
    if (skipped_.size() == before || std::chrono::steady_clock::now() >= give_up) return;
    std::this_thread::sleep_for(kSkipPause);
  }
}
void InterruptingServer::send_control_impl(xeus::xmessage message) {
  inner_->send_control(std::move(message));
}
void InterruptingServer::send_stdin_impl(xeus::xmessage message) {
  inner_->send_stdin(input_request_to_the_letter(std::move(message)));
}
void InterruptingServer::publish_impl(xeus::xpub_message message, xeus::channel c) {
  inner_->publish(std::move(message), c);
}
void InterruptingServer::start_impl(xeus::xpub_message message) {
  inner_->start(std::move(message));
}
void InterruptingServer::abort_queue_impl(const listener& /*xeus_abort*/,
                                          long /*polling_interval*/) {
  // Done before the failed cell's reply went out (send_shell_impl). xeus's
  // own would answer every skipped request `status: error` with no ename
  // and no status messages; ipykernel, and the protocol, abort only the
  // cells (`status: aborted`, between a busy and an idle of their own) and
  // answer the rest as usual: answer_aborted, once the failed cell's
  // handler is done.
}

void InterruptingServer::answer_aborted() {
  // Taken whole first: a request answered below may fail and skip more.
  std::vector<xeus::xmessage> skipped = std::exchange(skipped_, {});
  for (xeus::xmessage& m : skipped) {
    if (m.header().value("msg_type", "") != "execute_request") {
      deliver_shell(std::move(m));
      continue;
    }
    inner_->publish(status_for(m, "busy"), xeus::channel::SHELL);
    inner_->send_shell(aborted_reply(m));
    inner_->publish(status_for(m, "idle"), xeus::channel::SHELL);
  }
}

void InterruptingServer::stop_impl() {
  if (hooks_.before_stop) hooks_.before_stop();
  inner_->stop();
}
void InterruptingServer::update_config_impl(xeus::xconfiguration& config) const {
  inner_->update_config(config);
}

void set_server_hooks(ServerHooks hooks) { pending_hooks() = std::move(hooks); }

std::unique_ptr<xeus::xserver> make_interrupting_server(xeus::xcontext& context,
                                                        const xeus::xconfiguration& config,
                                                        nl::json::error_handler_t eh) {
  return std::make_unique<InterruptingServer>(xeus::make_xserver_control_main(context, config, eh),
                                              pending_hooks());
}

}  // namespace o4s::jupyter
