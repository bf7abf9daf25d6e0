#include "proto/frame_codec.h"

namespace o4s::proto {

std::string encode_frame(const Json& frame) {
  std::string line = frame.dump(-1, ' ', false, Json::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

Result<Json> decode_frame(std::string_view line) {
  if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Json::object();
  }
  Json parsed = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return make_error(ErrorCode::kProtocol, "malformed frame: not JSON");
  }
  return parsed;
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
