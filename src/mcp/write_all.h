// Writes a whole buffer to a borrowed fd: the stdio protocol pipe, an HTTP
// socket, the token file.
#pragma once

#include <string_view>

namespace o4s::mcp {

// False once the fd fails (EAGAIN included: on a socket with a send
// timeout, it is a client that stopped reading). A socket never raises
// SIGPIPE here.
bool write_all(int fd, std::string_view data);

}  // namespace o4s::mcp
