#include "mcp/json_rpc.h"

namespace o4s::mcp {

namespace {

bool valid_id(const Json& id) { return id.is_string() || id.is_number_integer(); }

Incoming invalid(std::string why, Json id = nullptr) {
  Incoming in;
  in.kind = MessageKind::kInvalid;
  in.error = std::move(why);
  in.id = valid_id(id) ? std::move(id) : Json(nullptr);
  return in;
}

}  // namespace

Incoming classify(Json message) {
  if (!message.is_object()) return invalid("a JSON-RPC message must be an object");
  Json id = message.contains("id") ? message["id"] : Json(nullptr);
  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return invalid("\"jsonrpc\" must be \"2.0\"", id);
  }
  auto method = message.find("method");
  if (method == message.end()) {
    // A response to one of our requests (elicitation).
    if (!valid_id(id)) return invalid("a response needs a string or integer id");
    if (message.contains("result") == message.contains("error")) {
      return invalid("a response has exactly one of \"result\" and \"error\"", id);
    }
    Incoming in;
    in.kind = MessageKind::kResponse;
    in.id = std::move(id);
    in.message = std::move(message);
    return in;
  }
  if (!method->is_string()) return invalid("\"method\" must be a string", id);
  Incoming in;
  in.method = method->get<std::string>();
  if (auto params = message.find("params"); params != message.end()) {
    if (!params->is_object()) return invalid("\"params\" must be an object", id);
    in.params = *params;
  }
  if (!message.contains("id")) {
    in.kind = MessageKind::kNotification;
    return in;
  }
  if (!valid_id(id)) return invalid("\"id\" must be a string or an integer");
  in.kind = MessageKind::kRequest;
  in.id = std::move(id);
  return in;
}

Json error_response(const Json& id, int code, const std::string& message,
                    std::optional<Json> data) {
  Json error{{"code", code}, {"message", message}};
  if (data) error["data"] = std::move(*data);
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

Json result_response(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json notification(const std::string& method, Json params) {
  return Json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

Json request(const Json& id, const std::string& method, Json params) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

std::string id_key(const Json& id) {
  if (id.is_string()) return "s:" + id.get<std::string>();
  return "n:" + id.dump();
}

}  // namespace o4s::mcp
