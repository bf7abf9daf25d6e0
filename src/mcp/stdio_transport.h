// MCP over stdio: one JSON-RPC message per line on stdin, answers on the
// protocol's own stdout (kept apart from fd 1, which is pointed at stderr
// so nothing else can write into the protocol). Returns at end of input.
#pragma once

#include "mcp/server.h"

namespace o4s::mcp {

// Moves the protocol's stdout to a private descriptor and points fd 1 at
// stderr; returns the protocol descriptor (-1 on failure).
int take_protocol_stdout();

// Reads messages until end of input; the session is closed after.
void serve_stdio(McpServer& server, const std::shared_ptr<Session>& session);

// A writer for Session: one line per message on `fd`.
Session::Writer line_writer(int fd);

}  // namespace o4s::mcp
