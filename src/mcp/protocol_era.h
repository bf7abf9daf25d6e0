// The two eras of MCP one server speaks. Handshake revisions (2025-03-26,
// 2025-06-18, 2025-11-25) settle the version and the client's capabilities
// once, in `initialize`, for a session. The stateless revision 2026-07-28
// carries them in every request's `_meta`, answers every result with a
// `resultType`, and replaces server-to-client requests (elicitation) with
// an `input_required` result the client answers on a retry of its call.
#pragma once

#include <optional>
#include <string>

#include "mcp/json_rpc.h"

namespace o4s::mcp {

// The revisions whose initialize handshake the server speaks, newest first.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
// The stateless revisions (server/discover, the version in each request).
inline constexpr const char* kStatelessVersion = "2026-07-28";

namespace meta_key {
inline constexpr const char* kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kServerInfo = "io.modelcontextprotocol/serverInfo";
}  // namespace meta_key

// 2026-07-28's error for a version the server does not speak.
inline constexpr int kUnsupportedProtocolVersion = -32022;
// 2026-07-28's error for HTTP headers that disagree with the body.
inline constexpr int kHeaderMismatch = -32020;

bool supported_handshake_version(const std::string& version);

// The protocol version a request names in its `_meta`, if any (a stateless
// request); "" when the key is there but not a string.
std::optional<std::string> stateless_version(const Json& params);
// The client's capabilities a stateless request declares in its `_meta`.
Json stateless_capabilities(const Json& params);
// The client's name a stateless request gives in its `_meta`.
std::string stateless_client_name(const Json& params);

// Form-mode elicitation: `{}` means form, `{"form": ...}` says it, a
// client declaring only "url" cannot show a form.
bool can_elicit_form(const Json& client_capabilities);

// The error for a stateless request in a version the server does not speak.
Json unsupported_version_error(const Json& id, const std::string& requested);

// What a result of a stateless request carries besides its own fields:
// `resultType` ("complete" unless it says otherwise), the server's identity,
// and for the cacheable methods how long it stays fresh.
void stamp_stateless_result(const std::string& method, Json& result, const Json& server_info);

}  // namespace o4s::mcp
