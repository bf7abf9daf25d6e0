#include "host/utf8_text.h"

namespace o4s::host {

namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U; }

}  // namespace

std::size_t utf8_length(std::string_view text) {
  std::size_t count = 0;
  for (char c : text) {
    if (!is_continuation(c)) ++count;
  }
  return count;
}

std::string_view utf8_prefix(std::string_view text, std::size_t limit) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation(text[i])) continue;
    if (seen == limit) return text.substr(0, i);
    ++seen;
  }
  return text;
}

}  // namespace o4s::host
