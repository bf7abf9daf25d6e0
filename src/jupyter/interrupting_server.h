// xeus 2.4 answers interrupt_request on the control channel itself without
// telling the interpreter (it expects signal-mode interrupts). This server
// wraps xeus's own ZeroMQ server (control on the main thread, shell on its
// own, so control is read while a cell runs) and calls a handler for every
// interrupt_request before xeus sends its reply, and another before it stops.
// It also brings xeus's messages to the letter of the protocol
// (message_rewrite.h) and answers cells skipped after a failed one
// (stop_on_error) with `status: aborted`.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <xeus/xeus_context.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver.hpp>

namespace o4s::jupyter {

struct ServerHooks {
  std::function<void()> on_interrupt;  // every interrupt_request
  std::function<void()> before_stop;   // once, before xeus stops its threads
  // Every well-formed execute_request, before xeus sees it: `unstored` says
  // it is shown but not stored (message_rewrite.h), so xeus gets it silent.
  std::function<void(bool unstored)> before_execute;
};

class InterruptingServer : public xeus::xserver {
 public:
  InterruptingServer(std::unique_ptr<xeus::xserver> inner, ServerHooks hooks);

 private:
  // Answers a malformed request with an error reply (see request_check.h);
  // true when it did, and the request then goes no further.
  bool rejected(const xeus::xmessage& request, xeus::channel channel);
  // A shell request on its way to xeus (checked, rewritten).
  void deliver_shell(xeus::xmessage m);
  // Answers what the failed cell's reply skipped: cells `status: aborted`,
  // other requests as usual.
  void answer_aborted();
  // Takes the shell requests queued behind a failed cell into skipped_.
  void skip_queued();

  xeus::xcontrol_messenger& get_control_messenger_impl() override;
  void send_shell_impl(xeus::xmessage message) override;
  void send_control_impl(xeus::xmessage message) override;
  void send_stdin_impl(xeus::xmessage message) override;
  void publish_impl(xeus::xpub_message message, xeus::channel c) override;
  void start_impl(xeus::xpub_message message) override;
  void abort_queue_impl(const listener& l, long polling_interval) override;
  void stop_impl() override;
  void update_config_impl(xeus::xconfiguration& config) const override;

  std::unique_ptr<xeus::xserver> inner_;
  ServerHooks hooks_;
  // Shell thread only: the execute_request being served when a failure of
  // it skips the queue behind it (stop_on_error, not silent), and what was
  // skipped.
  std::optional<std::string> skips_on_failure_;
  std::vector<xeus::xmessage> skipped_;
};

// The hooks the next make_interrupting_server builds its server with.
// xkernel takes a plain function pointer as server builder, so they cannot
// be captured; set them once before constructing the kernel.
void set_server_hooks(ServerHooks hooks);
std::unique_ptr<xeus::xserver> make_interrupting_server(xeus::xcontext& context,
                                                        const xeus::xconfiguration& config,
                                                        nl::json::error_handler_t eh);

}  // namespace o4s::jupyter
