// Secret handling for shell commands (§6.6): which words name secret files,
// and the redaction applied to every command or output text that leaves the
// capability service (permission targets, step inputs, audit previews).
// Scanners are hand-written single passes, so the time is linear.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "base/ascii.h"
#include "base/utf8.h"
#include "host/precheck.h"
#include "host/shell_lexer.h"

namespace o4s::host {

namespace {

constexpr int kMaxNesting = 4;

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Names a glob in a command is tested against: a pattern that could expand
// to one of them is treated as naming it.
constexpr std::array<std::string_view, 9> kSecretExamples = {
    ".env",   ".env.local", ".env.production", "id_rsa",     "id_ed25519",
    ".netrc", ".pgpass",    "server.pem",      "private.key"};

// One glob character class at pattern[i] ('[' already seen at i). Sets
// `next` past the class; false when there is no closing ']' (then '[' is a
// literal, as in fnmatch).
bool class_matches(std::string_view pattern, std::size_t i, char c, bool& matched,
                   std::size_t& next) {
  std::size_t j = i + 1;
  const bool negated = j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^');
  if (negated) ++j;
  bool found = false;
  bool first = true;
  for (; j < pattern.size() && (first || pattern[j] != ']'); first = false) {
    char low = pattern[j];
    char high = low;
    if (j + 2 < pattern.size() && pattern[j + 1] == '-' && pattern[j + 2] != ']') {
      high = pattern[j + 2];
      j += 3;
    } else {
      ++j;
    }
    found = found || (low <= c && c <= high);
  }
  if (j >= pattern.size()) return false;
  matched = found != negated;
  next = j + 1;
  return true;
}

// Shell glob (*, ?, [...]; backslash literal) over a short name. The one
// backtrack point for the last '*' makes it O(pattern x name), where
// recursive fnmatch(3) can go exponential on "*a*a*a...".
bool glob_match(std::string_view pattern, std::string_view name) {
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_n = 0;
  while (n < name.size()) {
    std::size_t next = p + 1;
    bool matched = false;
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_n = n;
      continue;
    }
    if (p < pattern.size()) {
      if (pattern[p] == '?') {
        matched = true;
      } else if (pattern[p] != '[' || !class_matches(pattern, p, name[n], matched, next)) {
        matched = pattern[p] == name[n];
        next = p + 1;
      }
    }
    if (matched) {
      p = next;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool glob_may_name_secret(std::string_view pattern) {
  for (std::string_view example : kSecretExamples) {
    if (glob_match(pattern, example)) return true;
  }
  return false;
}

// Quotes and shell punctuation a word may still carry when the lexer could
// not parse the command (unbalanced quotes), plus "(" ")" "`" from the
// halves of a substitution and a leading "@" (curl -d @.env reads the file).
constexpr std::string_view kStripChars = "'\"`;|&<>()@";

std::string_view strip_word(std::string_view word) {
  const std::size_t start = word.find_first_not_of(kStripChars);
  if (start == std::string_view::npos) return {};
  const std::size_t end = word.find_last_not_of(kStripChars);
  return word.substr(start, end - start + 1);
}

bool is_secret_candidate(std::string_view candidate) {
  const std::string_view stripped = strip_word(candidate);
  if (stripped.empty()) return false;
  const std::string name = ascii::lowered(shell::basename_of(stripped));
  if (name.find_first_of("*?[") != std::string::npos) return glob_may_name_secret(name);
  return is_secret_basename(name);
}

bool names_secret(std::string_view command, int depth) {
  for (const std::string& word : shell_words(command)) {
    if (is_secret_candidate(word)) return true;
    // The right-hand side of NAME=value (or --flag=value) is a path too.
    const std::size_t equals = word.find('=');
    if (equals != std::string::npos &&
        is_secret_candidate(std::string_view(word).substr(equals + 1))) {
      return true;
    }
  }
  if (depth >= kMaxNesting) return false;
  for (const std::string& body : shell::lex(command).nested) {
    if (names_secret(body, depth + 1)) return true;
  }
  return false;
}

// --- redaction --------------------------------------------------------------

bool is_token_char(char c) { return ascii::is_alnum(c) || c == '_' || c == '-'; }
bool is_bearer_char(char c) {
  return ascii::is_alnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
         c == '=' || c == '-';
}

std::size_t run_length(std::string_view text, std::size_t i, bool (*pred)(char)) {
  std::size_t j = i;
  while (j < text.size() && pred(text[j])) ++j;
  return j - i;
}

// "Bearer <token>" -> "Bearer <redacted>" (the scheme name in any case).
std::string redact_bearer(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if ((i == 0 || !ascii::is_alnum(text[i - 1])) && ascii::matches_lower_at(text, i, "bearer")) {
      std::size_t j = i + 6;
      const std::size_t gap = run_length(text, j, [](char c) { return c == ' ' || c == '\t'; });
      const std::size_t token = run_length(text, j + gap, is_bearer_char);
      if (gap > 0 && token > 0) {
        out.append(text.substr(i, 6 + gap)).append("<redacted>");
        i = j + gap + token;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

// Vendor prefixes of API tokens. The spec writes them with "-"; the real
// formats use "_" (ghp_, hf_, github_pat_, sk_live_), so both separators
// count: over-redacting a preview costs nothing, leaking a token does.
constexpr std::array<std::string_view, 10> kTokenPrefixes = {
    "sk", "ark", "ghp", "github_pat", "hf", "xoxb", "xoxa", "xoxp", "xoxr", "xoxs"};

// Length of a prefixed token starting at i, or 0.
std::size_t prefixed_token_at(std::string_view text, std::size_t i) {
  if (i > 0 && ascii::is_alnum(text[i - 1])) return 0;
  for (std::string_view prefix : kTokenPrefixes) {
    if (text.substr(i, prefix.size()) != prefix) continue;
    const std::size_t sep = i + prefix.size();
    if (sep >= text.size() || (text[sep] != '-' && text[sep] != '_')) continue;
    const std::size_t body = run_length(text, sep + 1, is_token_char);
    if (body >= 8) return prefix.size() + 1 + body;
  }
  return 0;
}

std::string redact_prefixed_tokens(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = prefixed_token_at(text, i);
    if (length > 0) {
      out.append("<redacted-token>");
      i += length;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

bool is_name_char(char c) { return ascii::is_alnum(c) || c == '_' || c == '-'; }

bool is_secret_name(std::string_view name) {
  const std::string lower = ascii::lowered(name);
  for (std::string_view marker : {"key", "token", "secret", "password", "passwd", "credential"}) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  return false;
}

// Length of an assignment value at i: a quoted string (to its closing
// quote) or a run up to whitespace or shell punctuation.
std::size_t value_length(std::string_view text, std::size_t i) {
  if (i >= text.size()) return 0;
  if (text[i] == '\'' || text[i] == '"') {
    const std::size_t close = text.find(text[i], i + 1);
    return (close == std::string_view::npos ? text.size() : close + 1) - i;
  }
  std::size_t j = i;
  while (j < text.size() && !ascii::is_space(text[j]) && text[j] != ';' && text[j] != '&' &&
         text[j] != '|' && text[j] != '\'' && text[j] != '"' && text[j] != '`' && text[j] != ')') {
    ++j;
  }
  return j - i;
}

// NAME=value with a secret-looking NAME -> NAME=<redacted>. NAME may carry
// dashes so --api-key=... is covered as well.
std::string redact_assignments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;  // text[copied, i) is still to be copied
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    std::size_t start = i;
    // Bounded by the previous '=' (not a name char), so the walks add up to
    // one pass.
    while (start > copied && is_name_char(text[start - 1])) --start;
    // The value is measured only for a secret name, so a long run of
    // a=b=c=... is not rescanned at every '='.
    if (start == i || !is_secret_name(text.substr(start, i - start))) continue;
    const std::size_t value = value_length(text, i + 1);
    if (value == 0) continue;
    out.append(text.substr(copied, i + 1 - copied)).append("<redacted>");
    copied = i + 1 + value;
    i = copied - 1;
  }
  out.append(text.substr(copied));
  return out;
}

// Beyond the spec's three forms, what a command line commonly carries a
// secret in: a secret-looking option's separate value (--password x), curl's
// credentials (-u user:pass), a URL's password (scheme://user:pass@host) and
// AWS access key ids.

bool is_value_char(char c) {
  return !ascii::is_space(c) && c != ';' && c != '&' && c != '|' && c != ')' && c != '`';
}

// Where the value of the option word text[i, name_end) starts, and whether
// it is curl's user:password: "--secret-name <blanks> value", "-u name:pw",
// "--user name:pw", "--user=name:pw" and "-uname:pw" (curl takes all of
// them). npos when the word is not such an option or has no value.
struct OptionValue {
  std::size_t start = std::string_view::npos;
  bool user = false;
};

OptionValue option_value_at(std::string_view text, std::size_t i, std::size_t name_end) {
  const std::string_view option = text.substr(i, name_end - i);
  if (option.size() > 2 && option.starts_with("-u") && name_end < text.size() &&
      text[name_end] == ':') {
    return {i + 2, true};  // -uname:pw, the value attached
  }
  if (option == "--user" && name_end < text.size() && text[name_end] == '=') {
    return {name_end + 1, true};
  }
  const bool user = option == "-u" || option == "--user";
  const std::size_t gap = run_length(text, name_end, [](char c) { return c == ' ' || c == '\t'; });
  const std::size_t start = name_end + gap;
  const bool secret = option.starts_with("--") && is_secret_name(option);
  if (gap == 0 || start >= text.size() || text[start] == '-' || !(user || secret)) return {};
  return {start, user};
}

// "--secret-name <blanks> value" -> "--secret-name <blanks> <redacted>", and
// curl's user options (option_value_at) keep the name before ':'.
std::string redact_option_values(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const bool starts_word = text[i] == '-' && (i == 0 || ascii::is_space(text[i - 1]));
    if (!starts_word) {
      out.push_back(text[i++]);
      continue;
    }
    const std::size_t name_end = i + run_length(text, i, is_name_char);
    const OptionValue found = option_value_at(text, i, name_end);
    const std::size_t value =
        found.start == std::string_view::npos ? 0 : value_length(text, found.start);
    std::size_t kept = 0;  // of a user option, the name before ':' stays
    if (found.user) kept = text.substr(found.start, value).find(':');
    if (value == 0 || kept == std::string_view::npos) {
      out.append(text.substr(i, name_end - i));
      i = name_end;
      continue;
    }
    if (found.user) ++kept;
    out.append(text.substr(i, found.start + kept - i)).append("<redacted>");
    i = found.start + value;
  }
  return out;
}

// "scheme://user:password@" -> "scheme://user:<redacted>@".
std::string redact_url_passwords(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (std::size_t at = text.find("://"); at != std::string_view::npos;
       at = text.find("://", at + 3)) {
    const std::size_t start = at + 3;
    const std::size_t end = start + run_length(text, start, [](char c) {
                              return is_value_char(c) && c != '/' && c != '?' && c != '#';
                            });
    const std::string_view authority = text.substr(start, end - start);
    const std::size_t sign = authority.rfind('@');
    if (sign == std::string_view::npos) continue;
    const std::size_t colon = authority.substr(0, sign).find(':');
    if (colon == std::string_view::npos || colon + 1 == sign) continue;
    out.append(text.substr(copied, start + colon + 1 - copied)).append("<redacted>");
    copied = start + sign;
  }
  out.append(text.substr(copied));
  return out;
}

// AWS access key ids: AKIA or ASIA and 16 upper-case letters or digits.
std::string redact_aws_key_ids(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const bool prefix = text.substr(i, 4) == "AKIA" || text.substr(i, 4) == "ASIA";
    const bool alone = i == 0 || !ascii::is_alnum(text[i - 1]);
    std::size_t body = 0;
    if (prefix && alone) {
      while (i + 4 + body < text.size() && body < 16 &&
             (ascii::is_digit(text[i + 4 + body]) ||
              (text[i + 4 + body] >= 'A' && text[i + 4 + body] <= 'Z'))) {
        ++body;
      }
    }
    if (body == 16) {
      out.append("<redacted-token>");
      i += 20;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

}  // namespace

bool is_secret_basename(std::string_view basename) {
  const std::string name = ascii::lowered(basename);
  // §6.6 plus the dispatcher pre-gate's *.env (§3): one rule everywhere.
  return name == ".env" || name.rfind(".env.", 0) == 0 || ends_with(name, ".env") ||
         ends_with(name, ".pem") || ends_with(name, ".key") || name == "id_rsa" ||
         name == "id_ed25519" || name == ".netrc" || name == ".pgpass";
}

bool references_secret_file(std::string_view command) {
  try {
    return names_secret(command, 0);
  } catch (...) {
    return true;  // a check that cannot run denies
  }
}

std::string redact_secrets(std::string_view text, std::size_t limit) {
  try {
    const std::string redacted = redact_aws_key_ids(redact_url_passwords(
        redact_option_values(redact_assignments(redact_prefixed_tokens(redact_bearer(text))))));
    return std::string(utf8::prefix(redacted, limit));
  } catch (...) {
    return {};  // nothing unredacted ever leaves
  }
}

}  // namespace o4s::host
