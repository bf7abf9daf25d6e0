// The kernel's peer connections read through a ZmtpFilter each (see
// zmtp_filter.h): hooked into libzmq's accept and recv by
// zmq_interposition.cpp. A connection is known from its accept on one of
// the kernel's ports until its descriptor is closed; every other
// descriptor's recv is passed through untouched.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <string_view>

#include "zmtp_filter.h"

namespace o4s::jupyter_app {

// The bounds of a connection accepted on `port` (one of the connection
// file's), or nullptr for any other port.
const MessageBounds* bounds_for_port(std::string_view port);

// The real libc functions (zmq_interposition.cpp).
namespace real {
ssize_t recv(int fd, void* buffer, std::size_t size, int flags);
}  // namespace real

// After accept/accept4 returned `fd`: watched when it came in on a kernel port.
void note_accepted(int fd);
// recv, filtered for a watched connection.
ssize_t guarded_recv_bytes(int fd, void* buffer, std::size_t size, int flags);

}  // namespace o4s::jupyter_app
