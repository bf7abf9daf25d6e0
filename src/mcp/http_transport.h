// MCP's Streamable HTTP transport at /mcp, on Boost.Beast (synchronous, a
// thread per connection, bounded): a POST carrying a request is answered
// with JSON, or (tools/call) with an SSE stream holding that request's
// progress, elicitations and final answer; a POST carrying notifications or
// responses gets 202. Every request must carry the bearer token; a foreign
// Origin is refused (DNS rebinding); a body over 16 MiB is refused from its
// Content-Length, before it is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "mcp/server.h"

namespace o4s::mcp {

struct HttpSettings {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string token;
  std::vector<std::string> allowed_origins;  // beyond the loopback ones
  std::size_t max_body_bytes = 16u << 20;
  std::size_t max_connections = 256;
  std::size_t max_sessions = 1024;
  int send_timeout_s = 30;  // a client that stops reading is dropped after it
};

// Serves until the process ends. Fails if the address cannot be bound.
Status serve_http(McpServer& server, const HttpSettings& settings);

// The bearer token in `path`: read when it exists (it must be 0600 and
// non-empty), else created with 32 random bytes as hex, mode 0600.
Result<std::string> load_or_create_token(const std::string& path);

// "127.0.0.1", "::1", "localhost".
bool is_loopback_host(const std::string& host);

}  // namespace o4s::mcp
