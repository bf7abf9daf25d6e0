#include "jupyter/interrupting_server.h"

#include <cstdio>
#include <optional>
#include <utility>
#include <xeus/xserver_control_main.hpp>

#include "jupyter/message_rewrite.h"
#include "jupyter/request_check.h"

namespace o4s::jupyter {

namespace {

// What xeus itself passes when it aborts the queue.
constexpr long kAbortPollingMs = 50;

ServerHooks& pending_hooks() {
  static ServerHooks hooks;
  return hooks;
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
  bool unstored = false;
  bool stop_on_error = false;
  if (m.header().value("msg_type", "") == "execute_request") {
    unstored = shown_but_unstored(m);
    stop_on_error = m.content().value("stop_on_error", false);
    if (hooks_.before_execute) hooks_.before_execute(unstored);
    if (unstored) m = as_uncounted(std::move(m));
  }
  notify_shell_listener(std::move(m));
  // xeus saw it silent, so it did not abort the queue after a failure;
  // ipykernel does (only a silent cell never aborts).
  if (unstored && stop_on_error && hooks_.unstored_failed && hooks_.unstored_failed()) {
    abort_queue_impl({}, kAbortPollingMs);
  }
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
  inner_->send_shell(std::move(message));
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
void InterruptingServer::abort_queue_impl(const listener& /*xeus_abort*/, long polling_interval) {
  // xeus answers every request queued behind a failed cell `status: error`
  // (no ename, no status messages) from inside that cell's handler.
  // ipykernel, and the protocol, abort only the cells (`status: aborted`,
  // between a busy and an idle of their own) and answer the rest as usual.
  // Both happen in order once the failed cell's handler is done
  // (answer_aborted).
  inner_->abort_queue([this](xeus::xmessage m) { skipped_.push_back(std::move(m)); },
                      polling_interval);
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
