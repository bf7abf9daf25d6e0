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
// - Every socket's frames and queues are bounded, shell, control and stdin
//   pass on only exactly signed messages, and stdin traffic outside an
//   input wait is dropped (socket_guard.h).
// - Below libzmq, each peer connection's messages are bounded in parts and
//   bytes (connection_guard.h): libzmq's accept and recv (libc's, called
//   by libzmq through the same interposition) pass through a filter.
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>
#include <zmq.h>

#include "connection_guard.h"
#include "early_listen.h"
#include "iopub_hold.h"
#include "socket_guard.h"

namespace {

template <typename Function>
Function next_symbol(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

namespace o4s::jupyter_app::real {

int msg_recv(zmq_msg_t* message, void* socket, int flags) {
  static const auto next = next_symbol<int (*)(zmq_msg_t*, void*, int)>("zmq_msg_recv");
  return next == nullptr ? -1 : next(message, socket, flags);
}

int msg_send(zmq_msg_t* message, void* socket, int flags) {
  static const auto next = next_symbol<int (*)(zmq_msg_t*, void*, int)>("zmq_msg_send");
  return next == nullptr ? -1 : next(message, socket, flags);
}

int poll(zmq_pollitem_t* items, int count, long timeout) {
  static const auto next = next_symbol<int (*)(zmq_pollitem_t*, int, long)>("zmq_poll");
  return next == nullptr ? -1 : next(items, count, timeout);
}

ssize_t recv(int fd, void* buffer, std::size_t size, int flags) {
  static const auto next = next_symbol<ssize_t (*)(int, void*, std::size_t, int)>("recv");
  if (next == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return next(fd, buffer, size, flags);
}

}  // namespace o4s::jupyter_app::real

extern "C" ssize_t recv(int fd, void* buffer, std::size_t size, int flags) {
  return o4s::jupyter_app::guarded_recv_bytes(fd, buffer, size, flags);
}

extern "C" int accept(int fd, sockaddr* address, socklen_t* length) {
  static const auto next = next_symbol<int (*)(int, sockaddr*, socklen_t*)>("accept");
  if (next == nullptr) return -1;
  int connection = next(fd, address, length);
  o4s::jupyter_app::note_accepted(connection);
  return connection;
}

extern "C" int accept4(int fd, sockaddr* address, socklen_t* length, int flags) {
  static const auto next = next_symbol<int (*)(int, sockaddr*, socklen_t*, int)>("accept4");
  if (next == nullptr) return -1;
  int connection = next(fd, address, length, flags);
  o4s::jupyter_app::note_accepted(connection);
  return connection;
}

extern "C" void* zmq_socket(void* context, int type) {
  static const auto next = next_symbol<void* (*)(void*, int)>("zmq_socket");
  if (next == nullptr) return nullptr;  // zmq_errno() then says why the caller failed
  void* socket = next(context, o4s::jupyter_app::socket_type_for(context, type));
  if (socket != nullptr && type == ZMQ_ROUTER) {
    int on = 1;
    ::zmq_setsockopt(socket, ZMQ_ROUTER_HANDOVER, &on, sizeof on);
  }
  return socket;
}

extern "C" int zmq_bind(void* socket, const char* endpoint) {
  static const auto next = next_symbol<int (*)(void*, const char*)>("zmq_bind");
  if (next == nullptr) return -1;
  o4s::jupyter_app::guard_before_bind(socket, endpoint);
  if (endpoint != nullptr) o4s::jupyter_app::use_listening_fd(socket, endpoint);
  int rc = next(socket, endpoint);
  if (rc == 0) o4s::jupyter_app::note_bound(socket, endpoint);
  return rc;
}

extern "C" int zmq_msg_send(zmq_msg_t* message, void* socket, int flags) {
  o4s::jupyter_app::before_send(socket, message, flags);
  return o4s::jupyter_app::guarded_send(message, socket, flags);
}

extern "C" int zmq_close(void* socket) {
  static const auto next = next_symbol<int (*)(void*)>("zmq_close");
  if (next == nullptr) return -1;
  o4s::jupyter_app::guard_before_close(socket);
  return next(socket);
}

extern "C" int zmq_msg_recv(zmq_msg_t* message, void* socket, int flags) {
  return o4s::jupyter_app::guarded_recv(message, socket, flags);
}

extern "C" int zmq_poll(zmq_pollitem_t* items, int count, long timeout) {
  return o4s::jupyter_app::guarded_poll(items, count, timeout);
}
