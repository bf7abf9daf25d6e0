// Character counts and cuts for user-visible text. The spec counts "chars"
// the way Python does (code points); a byte cut could also split a UTF-8
// sequence, and nlohmann::json refuses to serialise invalid UTF-8.
#pragma once

#include <cstddef>
#include <string_view>

namespace o4s::host {

// Code points in `text`; a stray continuation byte never starts one, so
// invalid input is counted approximately but never throws.
std::size_t utf8_length(std::string_view text);

// The longest prefix of `text` holding at most `limit` code points; never
// ends inside a multi-byte sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t limit);

}  // namespace o4s::host
