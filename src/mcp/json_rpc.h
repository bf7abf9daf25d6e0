// JSON-RPC 2.0 as MCP uses it: one message per line (stdio) or per POST
// body (HTTP). Classifies what arrived and builds the replies; the method
// table itself lives in the server.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace o4s::mcp {

using Json = nlohmann::json;

// The error codes of JSON-RPC 2.0 (and MCP's reuse of them).
namespace rpc_error {
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
}  // namespace rpc_error

enum class MessageKind { kRequest, kNotification, kResponse, kInvalid };

struct Incoming {
  MessageKind kind = MessageKind::kInvalid;
  Json id;  // a request's or response's id (string or integer); null if none
  std::string method;
  Json params = Json::object();
  Json message;       // the whole message (a response's result or error)
  std::string error;  // why it is invalid
};

// Sorts one decoded message. A request id must be a string or an integer
// (MCP: never null); params, when present, an object.
Incoming classify(Json message);

Json error_response(const Json& id, int code, const std::string& message,
                    std::optional<Json> data = std::nullopt);
Json result_response(const Json& id, Json result);
Json notification(const std::string& method, Json params);
Json request(const Json& id, const std::string& method, Json params);

// The id as a map key: "s:<text>" or "n:<number>" (1 and "1" differ).
std::string id_key(const Json& id);

}  // namespace o4s::mcp
