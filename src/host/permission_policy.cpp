#include "host/permission_policy.h"

#include <cstdint>
#include <tuple>
#include <utility>

#include "base/utf8.h"

namespace o4s::host {

namespace {

// Globs compare characters, not bytes, as Python's fnmatch does: "?" must
// match one "é", not half of it. Bytes that are not valid UTF-8 map to
// U+DC80..U+DCFF (Python's surrogateescape), so they match only themselves.
std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = lead < 0x80           ? 1
                         : (lead >> 5) == 0x6  ? 2
                         : (lead >> 4) == 0xE  ? 3
                         : (lead >> 3) == 0x1E ? 4
                                               : 0;
    char32_t code = length == 1   ? lead
                    : length == 2 ? lead & 0x1F
                    : length == 3 ? lead & 0x0F
                                  : lead & 0x07;
    bool valid = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      valid = utf8::is_continuation(text[i + k]);
      code = (code << 6) | (next & 0x3F);
    }
    if (!valid) {
      out.push_back(0xDC00 + lead);
      ++i;
      continue;
    }
    out.push_back(code);
    i += length;
  }
  return out;
}

struct Token {
  enum class Kind { kLiteral, kAnyChar, kStar, kSet } kind = Kind::kLiteral;
  char32_t literal = 0;
  bool negated = false;
  std::vector<std::pair<char32_t, char32_t>> ranges;  // inclusive; a > b matches nothing

  bool matches(char32_t c) const {
    switch (kind) {
      case Kind::kLiteral:
        return c == literal;
      case Kind::kAnyChar:
        return true;
      case Kind::kSet: {
        bool in = false;
        for (const auto& [low, high] : ranges) in = in || (low <= c && c <= high);
        return in != negated;
      }
      case Kind::kStar:
        break;
    }
    return false;
  }
};

// "[...]" starting at `open`, with fnmatch's rules: "!" first negates; a "]"
// right after "[" or "[!" is a member; "-" first or last is literal; no
// closing "]" makes the "[" an ordinary character (returns false).
bool parse_set(const std::u32string& pattern, std::size_t open, Token& token, std::size_t& next) {
  std::size_t end = open + 1;
  if (end < pattern.size() && pattern[end] == U'!') ++end;
  if (end < pattern.size() && pattern[end] == U']') ++end;
  while (end < pattern.size() && pattern[end] != U']') ++end;
  if (end >= pattern.size()) return false;

  std::u32string body = pattern.substr(open + 1, end - open - 1);
  token.kind = Token::Kind::kSet;
  token.negated = !body.empty() && body[0] == U'!';
  std::size_t k = token.negated ? 1 : 0;
  while (k < body.size()) {
    if (k + 2 < body.size() && body[k + 1] == U'-') {
      token.ranges.emplace_back(body[k], body[k + 2]);
      k += 3;
    } else {
      token.ranges.emplace_back(body[k], body[k]);
      ++k;
    }
  }
  next = end + 1;
  return true;
}

std::vector<Token> compile(const std::u32string& pattern) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < pattern.size()) {
    Token token;
    char32_t c = pattern[i];
    if (c == U'*') {
      // Runs of stars mean one star; keeping one keeps the matcher linear.
      if (tokens.empty() || tokens.back().kind != Token::Kind::kStar) {
        token.kind = Token::Kind::kStar;
        tokens.push_back(std::move(token));
      }
      ++i;
      continue;
    }
    if (c == U'?') {
      token.kind = Token::Kind::kAnyChar;
      ++i;
    } else if (c == U'[' && parse_set(pattern, i, token, i)) {
      // parse_set advanced i past the closing "]".
    } else {
      token.literal = c;
      ++i;
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

// Classic single-star backtracking: on a mismatch, let the last star absorb
// one more character. Each token matches exactly one character, so this is
// complete and at worst O(pattern * text).
bool glob_match(const std::vector<Token>& tokens, const std::u32string& text) {
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = kNone;
  std::size_t resume = 0;
  while (t < text.size()) {
    if (p < tokens.size() && tokens[p].kind == Token::Kind::kStar) {
      star = p++;
      resume = t;
    } else if (p < tokens.size() && tokens[p].matches(text[t])) {
      ++p;
      ++t;
    } else if (star != kNone) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < tokens.size() && tokens[p].kind == Token::Kind::kStar) ++p;
  return p == tokens.size();
}

bool is_wildcard(std::string_view value) { return value.empty() || value == "*"; }

int scope_rank(const std::string& scope) {
  if (scope == "conversation") return 2;
  if (scope == "project") return 1;
  return 0;
}

// A rule's decision; an unknown word (a row some other writer corrupted)
// asks, which fails closed when no one can answer.
Decision parse_decision(const std::string& decision) {
  if (decision == "allow") return Decision::kAllow;
  if (decision == "deny") return Decision::kDeny;
  return Decision::kAsk;
}

}  // namespace

std::string_view decision_name(Decision decision) {
  switch (decision) {
    case Decision::kAllow:
      return "allow";
    case Decision::kDeny:
      return "deny";
    case Decision::kAsk:
      break;
  }
  return "ask";
}

bool pattern_matches(std::string_view pattern, std::string_view target) {
  if (is_wildcard(pattern) || pattern == target) return true;
  return glob_match(compile(decode_utf8(pattern)), decode_utf8(target));
}

Decision resolve_permission(const std::vector<store::PermissionRule>& rules, std::string_view tool,
                            std::string_view target) {
  // Specificity, compared left to right: a named tool, a non-wildcard
  // pattern, a longer pattern, a narrower scope, a newer edit.
  using Key = std::tuple<bool, bool, std::size_t, int, std::int64_t>;
  const store::PermissionRule* best = nullptr;
  Key best_key;
  for (const store::PermissionRule& rule : rules) {
    if (!pattern_matches(rule.tool, tool) || !pattern_matches(rule.pattern, target)) continue;
    // A matching deny is a veto, however general it is.
    if (parse_decision(rule.decision) == Decision::kDeny) return Decision::kDeny;
    Key key{!is_wildcard(rule.tool), !is_wildcard(rule.pattern), decode_utf8(rule.pattern).size(),
            scope_rank(rule.scope), rule.updated_at};
    // Strictly greater: of equal keys the first listed wins, as Python's max().
    if (best == nullptr || key > best_key) {
      best = &rule;
      best_key = key;
    }
  }
  return best == nullptr ? Decision::kAsk : parse_decision(best->decision);
}

}  // namespace o4s::host
