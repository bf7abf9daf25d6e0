// Every ROUTER socket of the kernel (shell, control, stdin) hands a routing
// identity over to its newest connection, as ipykernel's do.
//
// jupyter_client names a client's sockets after its session id, and
// KernelManager.client() reuses the manager's session, so a second client
// of one manager (or a client that reconnected) has the identity of one
// already known. A ROUTER without ZMQ_ROUTER_HANDOVER keeps the first
// connection and silently drops everything for the second: its requests
// run, its replies never arrive (jupyter console waited forever). xeus 2.4
// creates its sockets internally and sets no such option, so this file
// interposes zmq_socket: the executable's definition wins over libzmq's
// for libxeus too (ELF symbol interposition), and calls the real one.
#include <dlfcn.h>
#include <zmq.h>

extern "C" void* zmq_socket(void* context, int type) {
  using SocketFunction = void* (*)(void*, int);
  static const auto real = reinterpret_cast<SocketFunction>(::dlsym(RTLD_NEXT, "zmq_socket"));
  if (real == nullptr) return nullptr;  // zmq_errno() then says why the caller failed
  void* socket = real(context, type);
  if (socket != nullptr && type == ZMQ_ROUTER) {
    int on = 1;
    ::zmq_setsockopt(socket, ZMQ_ROUTER_HANDOVER, &on, sizeof on);
  }
  return socket;
}
