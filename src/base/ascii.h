// ASCII character classes and case, independent of the C locale: the host
// parses shell text, settings and names whose rules are ASCII, and a Python
// parent may have called setlocale() so <cctype> could answer otherwise for
// bytes past 0x7F. Every byte of a multi-byte UTF-8 sequence is in no class.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace o4s::ascii {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_alpha(char c) { return is_lower(c) || is_upper(c); }
constexpr bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
// The six bytes C's isspace() names in the "C" locale.
constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

constexpr char to_lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr char to_upper(char c) { return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c; }

// `text` with A-Z (resp. a-z) mapped; every other byte kept.
std::string lowered(std::string_view text);
std::string uppered(std::string_view text);

// Whether `text` from `at` starts with `lower_word` in any letter case;
// `lower_word` is given in lower case. False when `at` is past the end.
bool matches_lower_at(std::string_view text, std::size_t at, std::string_view lower_word);

}  // namespace o4s::ascii
