#include "base/utf8.h"

namespace o4s::utf8 {

namespace {

// Length of the UTF-8 sequence a lead byte starts; 0 for a byte that cannot
// lead one.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Rejects overlong forms, surrogates and code points past U+10FFFF.
bool valid_second_byte(unsigned char lead, unsigned char second) {
  if (lead == 0xE0) return second >= 0xA0;
  if (lead == 0xED) return second < 0xA0;
  if (lead == 0xF0) return second >= 0x90;
  if (lead == 0xF4) return second < 0x90;
  return true;
}

}  // namespace

std::size_t length(std::string_view text) {
  std::size_t count = 0;
  for (char byte : text) {
    if (!is_continuation(byte)) ++count;
  }
  return count;
}

std::string_view prefix(std::string_view text, std::size_t max_code_points) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation(text[i])) continue;
    if (seen == max_code_points) return text.substr(0, i);
    ++seen;
  }
  return text;
}

std::string_view prefix_within_bytes(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  while (end > 0 && is_continuation(text[end])) --end;
  return text.substr(0, end);
}

std::string_view suffix_within_bytes(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t start = text.size() - max_bytes;
  while (start < text.size() && is_continuation(text[start])) ++start;
  return text.substr(start);
}

std::size_t complete_prefix(std::string_view bytes) {
  // Only the last three bytes can belong to an unfinished sequence.
  std::size_t n = bytes.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    char byte = bytes[n - back];
    if (is_continuation(byte)) continue;
    std::size_t want = sequence_length(static_cast<unsigned char>(byte));
    return want > back ? n - back : n;
  }
  return n;
}

std::string replace_invalid(std::string_view bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(bytes.size());
  std::size_t i = 0;
  while (i < bytes.size()) {
    auto lead = static_cast<unsigned char>(bytes[i]);
    std::size_t want = sequence_length(lead);
    bool ok = want > 0 && i + want <= bytes.size();
    for (std::size_t k = 1; ok && k < want; ++k) {
      auto byte = static_cast<unsigned char>(bytes[i + k]);
      ok = is_continuation(bytes[i + k]) && (k != 1 || valid_second_byte(lead, byte));
    }
    if (ok) {
      out.append(bytes.substr(i, want));
      i += want;
    } else {
      out.append(kReplacement);
      ++i;
    }
  }
  return out;
}

}  // namespace o4s::utf8
