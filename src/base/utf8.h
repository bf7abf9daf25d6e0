// Counting, cutting and repairing UTF-8 text. The spec counts "chars" the
// way Python does (code points); a byte cut could split a multi-byte
// sequence, and nlohmann::json refuses to serialise invalid UTF-8. Counts
// and cuts here look only at lead versus continuation bytes, so they never
// fail on invalid input (a stray continuation byte simply starts nothing).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace o4s::utf8 {

// 10xxxxxx: a byte inside a multi-byte sequence, never the start of one.
constexpr bool is_continuation(char byte) {
  return (static_cast<unsigned char>(byte) & 0xC0U) == 0x80U;
}

// Code points in `text`: the bytes that are not continuation bytes.
std::size_t length(std::string_view text);

// The longest prefix holding at most `max_code_points` code points.
std::string_view prefix(std::string_view text, std::size_t max_code_points);

// The longest prefix of at most `max_bytes` bytes that does not end inside
// a sequence (it backs off to the lead byte of a sequence it would split).
std::string_view prefix_within_bytes(std::string_view text, std::size_t max_bytes);

// The longest suffix of at most `max_bytes` bytes that starts on a lead
// byte (it skips the continuation bytes of a sequence it would split).
std::string_view suffix_within_bytes(std::string_view text, std::size_t max_bytes);

// The length of `bytes` without a multi-byte sequence that is cut short at
// its end (whose tail is still to come, as in a pipe read); other invalid
// bytes are left for replace_invalid.
std::size_t complete_prefix(std::string_view bytes);

// `bytes` with every byte that does not belong to a well-formed sequence
// (overlong forms, surrogates and code points past U+10FFFF included)
// replaced by U+FFFD, one replacement per such byte.
std::string replace_invalid(std::string_view bytes);

}  // namespace o4s::utf8
