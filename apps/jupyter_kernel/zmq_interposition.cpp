// Socket behaviour xeus 2.4 does not offer, added by interposing libzmq:
// xeus creates its sockets internally, and the executable's definitions of
// these functions win over libzmq's for libxeus too (ELF symbol
// interposition); each calls the real one.
//
// - Every ROUTER socket (shell, control, stdin) hands a routing identity
//   over to its newest connection, as ipykernel's do. jupyter_client names a
//   client's sockets after its session id, and KernelManager.client() reuses
//   the manager's session, so a second client of one manager (or a client
//   that reconnected) has the identity of one already known. A ROUTER
//   without ZMQ_ROUTER_HANDOVER keeps the first connection and silently
//   drops everything for the second: its requests run, its replies never
//   arrive (jupyter console waited forever).
// - iopub's first message waits for its first subscriber (iopub_hold.h).
#include <dlfcn.h>
#include <zmq.h>

#include "iopub_hold.h"

namespace {

template <typename Function>
Function real(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" void* zmq_socket(void* context, int type) {
  static const auto next = real<void* (*)(void*, int)>("zmq_socket");
  if (next == nullptr) return nullptr;  // zmq_errno() then says why the caller failed
  void* socket = next(context, o4s::jupyter_app::socket_type_for(context, type));
  if (socket != nullptr && type == ZMQ_ROUTER) {
    int on = 1;
    ::zmq_setsockopt(socket, ZMQ_ROUTER_HANDOVER, &on, sizeof on);
  }
  return socket;
}

extern "C" int zmq_bind(void* socket, const char* endpoint) {
  static const auto next = real<int (*)(void*, const char*)>("zmq_bind");
  if (next == nullptr) return -1;
  int rc = next(socket, endpoint);
  if (rc == 0) o4s::jupyter_app::note_bound(socket, endpoint);
  return rc;
}

extern "C" int zmq_msg_send(zmq_msg_t* message, void* socket, int flags) {
  static const auto next = real<int (*)(zmq_msg_t*, void*, int)>("zmq_msg_send");
  if (next == nullptr) return -1;
  o4s::jupyter_app::before_send(socket, message, flags);
  return next(message, socket, flags);
}
