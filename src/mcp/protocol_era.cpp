#include "mcp/protocol_era.h"

#include <map>

namespace o4s::mcp {

namespace {

struct CacheHint {
  long long ttl_ms;
  const char* scope;
};

// The cacheable results (2026-07-28, CacheableResult). The tool list and
// the server's description never change while it runs; resources come
// and go with cells, and belong to whoever holds the kernel.
const std::map<std::string, CacheHint>& cache_hints() {
  static const std::map<std::string, CacheHint> hints{
      {"server/discover", {3600000, "public"}},
      {"tools/list", {3600000, "public"}},
      {"resources/templates/list", {3600000, "public"}},
      {"resources/list", {0, "private"}},
      {"resources/read", {0, "private"}},
  };
  return hints;
}

const Json* meta_of(const Json& params) {
  if (!params.is_object()) return nullptr;
  auto meta = params.find("_meta");
  return meta != params.end() && meta->is_object() ? &*meta : nullptr;
}

}  // namespace

bool supported_handshake_version(const std::string& version) {
  for (const char* known : kProtocolVersions) {
    if (version == known) return true;
  }
  return false;
}

std::optional<std::string> stateless_version(const Json& params) {
  const Json* meta = meta_of(params);
  if (!meta) return std::nullopt;
  auto version = meta->find(meta_key::kProtocolVersion);
  if (version == meta->end()) return std::nullopt;
  return version->is_string() ? version->get<std::string>() : std::string();
}

Json stateless_capabilities(const Json& params) {
  const Json* meta = meta_of(params);
  if (!meta) return Json::object();
  auto capabilities = meta->find(meta_key::kClientCapabilities);
  return capabilities != meta->end() && capabilities->is_object() ? *capabilities : Json::object();
}

std::string stateless_client_name(const Json& params) {
  const Json* meta = meta_of(params);
  if (!meta) return "unknown client";
  auto info = meta->find(meta_key::kClientInfo);
  if (info == meta->end() || !info->is_object()) return "unknown client";
  auto name = info->find("name");
  return name != info->end() && name->is_string() ? name->get<std::string>() : "unknown client";
}

bool can_elicit_form(const Json& client_capabilities) {
  if (!client_capabilities.is_object()) return false;
  auto it = client_capabilities.find("elicitation");
  if (it == client_capabilities.end() || !it->is_object()) return false;
  return it->empty() || it->contains("form");
}

Json unsupported_version_error(const Json& id, const std::string& requested) {
  // Only the stateless revisions: a handshake revision is reached through
  // initialize, never named in _meta.
  return error_response(
      id, kUnsupportedProtocolVersion, "Unsupported protocol version",
      Json{{"supported", Json::array({kStatelessVersion})}, {"requested", requested}});
}

void stamp_stateless_result(const std::string& method, Json& result, const Json& server_info) {
  if (!result.is_object()) return;
  if (!result.contains("resultType")) result["resultType"] = "complete";
  if (!result.contains("_meta") || !result["_meta"].is_object()) result["_meta"] = Json::object();
  result["_meta"][meta_key::kServerInfo] = server_info;
  if (auto hint = cache_hints().find(method); hint != cache_hints().end()) {
    result["ttlMs"] = hint->second.ttl_ms;
    result["cacheScope"] = hint->second.scope;
  }
}

}  // namespace o4s::mcp
