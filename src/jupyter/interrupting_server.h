// xeus 2.4 answers interrupt_request on the control channel itself without
// telling the interpreter (it expects signal-mode interrupts). This server
// wraps xeus's own ZeroMQ server (control on the main thread, shell on its
// own, so control is read while a cell runs) and calls a handler for every
// interrupt_request before xeus sends its reply.
#pragma once

#include <functional>
#include <memory>
#include <xeus/xeus_context.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver.hpp>

namespace o4s::jupyter {

class InterruptingServer : public xeus::xserver {
 public:
  InterruptingServer(std::unique_ptr<xeus::xserver> inner, std::function<void()> on_interrupt);

 private:
  // Answers a malformed request with an error reply (see request_check.h);
  // true when it did, and the request then goes no further.
  bool rejected(const xeus::xmessage& request, xeus::channel channel);

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
  std::function<void()> on_interrupt_;
};

// The handler the next make_interrupting_server builds its server with.
// xkernel takes a plain function pointer as server builder, so the handler
// cannot be captured; set it once before constructing the kernel.
void set_interrupt_handler(std::function<void()> handler);
std::unique_ptr<xeus::xserver> make_interrupting_server(xeus::xcontext& context,
                                                        const xeus::xconfiguration& config,
                                                        nl::json::error_handler_t eh);

}  // namespace o4s::jupyter
