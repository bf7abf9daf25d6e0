#include "proto/frame_codec.h"

#include <string>

#include "proto/json_decoders.h"
#include "proto/limits.h"

namespace o4s::proto {

namespace {

// nlohmann and simdjson skip a leading byte-order mark; JSON text has none
// and the worker's decoder refuses it, so the host does too (one answer per
// line of tests/protocol/frames.jsonl).
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

Result<Json> bom_error() {
  return make_error(ErrorCode::kProtocol, "malformed frame: a byte-order mark is not JSON");
}

bool nested_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxFrameDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// What replaces a frame nested deeper than either side reads: its type and
// id with an error, so the request it answers still gets its one answer (a
// host_response becomes a host.X error in the cell), as the worker replaces
// an oversized frame rather than write one the host would refuse.
Json too_deep_replacement(const Json& frame) {
  Json out = Json::object();
  for (const char* key : {"type", "id"}) {
    if (frame.is_object() && frame.contains(key) && frame[key].is_string()) out[key] = frame[key];
  }
  out["error"] = "the host dropped a frame nested deeper than " + std::to_string(kMaxFrameDepth) +
                 " levels (the wire's limit)";
  return out;
}

std::string dump(const Json& frame) {
  return frame.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string encode_frame(const Json& frame) {
  std::string line = dump(frame);
  // Past the limit a line needs more than 2 * kMaxFrameDepth brackets.
  if (line.size() > 2 * static_cast<std::size_t>(kMaxFrameDepth) && nested_too_deep(line)) {
    line = dump(too_deep_replacement(frame));
  }
  line.push_back('\n');
  return line;
}

namespace detail {

Result<Json> decode_reference(std::string_view line) {
  if (line.starts_with(kUtf8Bom)) return bom_error();
  if (nested_too_deep(line)) {
    return make_error(ErrorCode::kProtocol, "malformed frame: nested too deep");
  }
  Json parsed = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return make_error(ErrorCode::kProtocol, "malformed frame: not JSON");
  }
  return parsed;
}

}  // namespace detail

Result<Json> decode_frame(std::string_view line) {
  if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Json::object();
  }
  // The reference refuses it too; the fast parser would skip it.
  if (line.starts_with(kUtf8Bom)) return bom_error();
  if (auto fast = detail::decode_fast(line)) return std::move(*fast);
  return detail::decode_reference(line);
}

std::string_view frame_type(const Json& frame) {
  if (!frame.is_object()) return {};
  auto it = frame.find("type");
  if (it == frame.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

std::string frame_string(const Json& frame, const char* key) {
  if (!frame.is_object()) return {};
  auto it = frame.find(key);
  if (it == frame.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

}  // namespace o4s::proto
