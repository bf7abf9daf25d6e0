// The listening sockets the launcher (launcher_main.cpp) opened on the
// kernel's ports before the kernel was loaded: each ZeroMQ socket bound to
// one of those ports takes its socket over (ZMQ_USE_FD) instead of binding
// anew, so connections that came early, waiting in its backlog, are served.
#pragma once

#include <string>
#include <string_view>

namespace o4s::jupyter_app {

// "3,4,5,6,7" from --listening-fds: five listening IPv4 TCP sockets on
// distinct ports, made close-on-exec (no worker inherits them). False, and
// none is taken, for anything else.
bool adopt_listening_fds(std::string_view list);
// zmq_bind, before the real one: hands the adopted socket whose address is
// exactly `endpoint` ("tcp://127.0.0.1:5555"), if any, to `socket`.
void use_listening_fd(void* socket, std::string_view endpoint);
// Once the kernel has bound its ports: closes what no ZeroMQ socket took.
void close_unused_listening_fds();

}  // namespace o4s::jupyter_app
