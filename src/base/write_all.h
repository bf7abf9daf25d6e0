// Writes a whole buffer to a borrowed fd: a pipe, a socket, a file (the MCP
// server's protocol pipe and sockets, the host's downloads).
#pragma once

#include <string_view>

namespace o4s {

// False once the fd fails (EAGAIN included: on a socket with a send
// timeout, it is a client that stopped reading). A socket never raises
// SIGPIPE here.
bool write_all(int fd, std::string_view data);

}  // namespace o4s
