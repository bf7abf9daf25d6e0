// JSON-lines frame codec: one JSON value per line, UTF-8, raw non-ASCII.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/result.h"

namespace o4s::proto {

using Json = nlohmann::json;

// Serialises one frame followed by '\n'. Invalid UTF-8 in strings is replaced
// rather than thrown on, so a hostile string can never abort a write; a frame
// nested deeper than kMaxFrameDepth (which no reader accepts) is replaced by
// its type, id and an error.
std::string encode_frame(const Json& frame);

// Parses one line (with or without its '\n'). A whitespace-only line is the
// empty frame {} (spec §3.1); anything unparsable is a kProtocol error.
Result<Json> decode_frame(std::string_view line);

// Convenience accessors that never throw on a frame of the wrong shape.
std::string_view frame_type(const Json& frame);
std::string frame_string(const Json& frame, const char* key);

}  // namespace o4s::proto
