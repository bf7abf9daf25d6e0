#include "base/ascii.h"

namespace o4s::ascii {

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = to_lower(c);
  return out;
}

std::string uppered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = to_upper(c);
  return out;
}

bool matches_lower_at(std::string_view text, std::size_t at, std::string_view lower_word) {
  if (at > text.size() || text.size() - at < lower_word.size()) return false;
  for (std::size_t k = 0; k < lower_word.size(); ++k) {
    if (to_lower(text[at + k]) != lower_word[k]) return false;
  }
  return true;
}

}  // namespace o4s::ascii
