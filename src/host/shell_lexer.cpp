#include "host/shell_lexer.h"

#include <array>
#include <utility>

#include "base/ascii.h"
#include "host/precheck.h"
#include "host/precheck_rules.h"

namespace o4s::host::shell {

namespace {

// Longest first, so "&&" wins over "&" and "&>>" over "&>".
constexpr std::array<std::string_view, 20> kOperators = {"&>>", "<<<", "&&", "||", "|&", ">>", ">|",
                                                         "&>",  ">&",  "<<", "<>", "<&", ";",  "|",
                                                         "&",   "(",   ")",  "\n", ">",  "<"};

bool is_operator_start(char c) {
  return c == ';' || c == '|' || c == '&' || c == '(' || c == ')' || c == '\n' || c == '>' ||
         c == '<';
}

int digit_value(char c, int base) {
  int value = 99;
  if (c >= '0' && c <= '9') value = c - '0';
  if (c >= 'a' && c <= 'f') value = c - 'a' + 10;
  if (c >= 'A' && c <= 'F') value = c - 'A' + 10;
  return value < base ? value : -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Lexed run() {
    while (i_ < text_.size()) step();
    finish_word();
    return std::move(out_);
  }

 private:
  void step() {
    const char c = text_[i_];
    if (c == ' ' || c == '\t' || c == '\r') {
      finish_word();
      out_.skeleton.push_back(' ');
      ++i_;
    } else if (c == '#' && !in_word_) {
      // A comment runs to the newline, which stays (it separates commands).
      std::size_t end = text_.find('\n', i_);
      i_ = end == std::string_view::npos ? text_.size() : end;
    } else if (c == '\'') {
      single_quoted();
    } else if (text_.substr(i_, 2) == "$'") {
      ansi_c_quoted();
    } else if (text_.substr(i_, 2) == "$\"") {
      ++i_;  // $"..." is a translatable double-quoted string
      double_quoted();
    } else if (c == '"') {
      double_quoted();
    } else if (c == '\\') {
      backslash();
    } else if (c == '`' || text_.substr(i_, 2) == "$(" || text_.substr(i_, 2) == "<(" ||
               text_.substr(i_, 2) == ">(") {
      substitution();
    } else {
      operator_or_char();
    }
  }

  void finish_word() {
    if (in_word_) out_.tokens.push_back({TokenKind::kWord, std::move(word_)});
    word_.clear();
    in_word_ = false;
  }

  void single_quoted() {
    std::size_t end = text_.find('\'', i_ + 1);
    if (end == std::string_view::npos) {
      out_.balanced = false;
      end = text_.size();
    }
    word_.append(text_.substr(i_ + 1, end - i_ - 1));
    in_word_ = true;
    out_.skeleton.append("''");
    i_ = end + 1;
  }

  // $'...' (bash): backslash escapes are decoded, so $'\x2f' is "/".
  void ansi_c_quoted() {
    in_word_ = true;
    out_.skeleton.append("''");
    i_ += 2;
    while (i_ < text_.size() && text_[i_] != '\'') {
      if (text_[i_] == '\\' && i_ + 1 < text_.size()) {
        ansi_c_escape();
      } else {
        word_.push_back(text_[i_++]);
      }
    }
    if (i_ >= text_.size()) out_.balanced = false;
    ++i_;
  }

  // One escape at i_ (a backslash with at least one character after it).
  void ansi_c_escape() {
    const char e = text_[i_ + 1];
    i_ += 2;
    auto digits = [&](int base, std::size_t max_digits) {
      int value = 0;
      std::size_t used = 0;
      while (used < max_digits && i_ < text_.size()) {
        const int digit = digit_value(text_[i_], base);
        if (digit < 0) break;
        value = value * base + digit;
        ++i_;
        ++used;
      }
      return used == 0 ? -1 : value;
    };
    // Single-character escapes, position for position.
    constexpr std::string_view kFrom = "ntrabeEfv\\'\"?";
    constexpr std::string_view kTo = "\n\t\r\a\b\x1b\x1b\f\v\\'\"?";
    int decoded = -1;
    if (const std::size_t at = kFrom.find(e); at != std::string_view::npos) {
      decoded = static_cast<unsigned char>(kTo[at]);
    } else if (e == 'x') {
      decoded = digits(16, 2);
    } else if (e >= '0' && e <= '7') {
      --i_;  // the first octal digit is part of the value
      decoded = digits(8, 3);
    }
    if (decoded < 0) {
      word_.push_back('\\');
      word_.push_back(e);
    } else {
      word_.push_back(static_cast<char>(decoded & 0xFF));
    }
  }

  // Inside double quotes a backslash escapes only " \ $ ` and newline, and
  // substitutions still run.
  void double_quoted() {
    in_word_ = true;
    out_.skeleton.append("\"\"");
    ++i_;
    while (i_ < text_.size() && text_[i_] != '"') {
      const char c = text_[i_];
      if (c == '\\' && i_ + 1 < text_.size()) {
        const char next = text_[i_ + 1];
        if (next == '\n') {
          i_ += 2;
          continue;
        }
        if (next == '"' || next == '\\' || next == '$' || next == '`') {
          word_.push_back(next);
          i_ += 2;
          continue;
        }
      }
      if (c == '`' || text_.substr(i_, 2) == "$(") {
        word_.append(read_substitution());
        continue;
      }
      word_.push_back(c);
      ++i_;
    }
    if (i_ >= text_.size()) out_.balanced = false;
    ++i_;
  }

  void backslash() {
    in_word_ = true;
    if (i_ + 1 >= text_.size()) {
      ++i_;
      return;
    }
    // Backslash-newline is a line continuation: it vanishes.
    if (text_[i_ + 1] != '\n') word_.push_back(text_[i_ + 1]);
    i_ += 2;
  }

  void substitution() {
    word_.append(read_substitution());
    in_word_ = true;
    out_.skeleton.append("$()");
  }

  // Reads $(...), <(...), >(...) (parentheses balanced, backslashes
  // skipped) or `...` from i_, records the body and returns the raw text.
  std::string_view read_substitution() {
    const std::size_t start = i_;
    std::size_t body_start = 0;
    std::size_t body_end = 0;
    if (text_[i_] == '`') {
      body_start = i_ + 1;
      std::size_t close = text_.find('`', body_start);
      if (close == std::string_view::npos) {
        out_.balanced = false;
        body_end = i_ = text_.size();
      } else {
        body_end = close;
        i_ = close + 1;
      }
    } else {
      body_start = i_ + 2;
      int depth = 0;
      std::size_t j = i_ + 1;
      for (; j < text_.size(); ++j) {
        const char c = text_[j];
        if (c == '\\') {
          ++j;
        } else if (c == '(') {
          ++depth;
        } else if (c == ')' && --depth == 0) {
          break;
        }
      }
      if (j >= text_.size()) {
        out_.balanced = false;
        body_end = i_ = text_.size();
      } else {
        body_end = j;
        i_ = j + 1;
      }
    }
    out_.nested.emplace_back(text_.substr(body_start, body_end - body_start));
    return text_.substr(start, i_ - start);
  }

  void operator_or_char() {
    // File-descriptor digits directly before a redirection belong to it
    // (2>/dev/null); they are dropped.
    if (ascii::is_digit(text_[i_]) && !in_word_) {
      std::size_t j = i_;
      while (j < text_.size() && ascii::is_digit(text_[j])) ++j;
      if (j < text_.size() && (text_[j] == '<' || text_[j] == '>')) i_ = j;
    }
    if (is_operator_start(text_[i_])) {
      for (std::string_view op : kOperators) {
        if (text_.substr(i_, op.size()) != op) continue;
        finish_word();
        out_.tokens.push_back({TokenKind::kOperator, std::string(op == "\n" ? ";" : op)});
        out_.skeleton.append(op);
        i_ += op.size();
        return;
      }
    }
    word_.push_back(text_[i_]);
    in_word_ = true;
    out_.skeleton.push_back(text_[i_]);
    ++i_;
  }

  std::string_view text_;
  std::size_t i_ = 0;
  std::string word_;
  bool in_word_ = false;
  Lexed out_;
};

bool is_redirection(std::string_view op) {
  return op == ">" || op == ">>" || op == ">|" || op == "&>" || op == "&>>" || op == ">&" ||
         op == "<" || op == "<<" || op == "<<<" || op == "<>" || op == "<&";
}

bool writes_file(std::string_view op, std::string_view target) {
  if (op == ">&") {
    // >&2 duplicates a descriptor; >&file writes the file (bash).
    bool digits = !target.empty();
    for (char c : target) digits = digits && ascii::is_digit(c);
    return !digits && target != "-";
  }
  return op == ">" || op == ">>" || op == ">|" || op == "&>" || op == "&>>" || op == "<>";
}

// Launch prefixes and reserved words come from the precheck's rule table,
// which the worker's Python check reads too.
using Prefix = std::pair<const std::string, std::vector<std::string>>;

// Reserved words that may start a command without being what runs.
bool is_reserved_word(std::string_view word) {
  const auto& reserved = precheck_rules().reserved_words;
  return reserved.find(word) != reserved.end();
}

const Prefix* find_prefix(std::string_view word) {
  const auto& prefixes = precheck_rules().launch_prefixes;
  auto it = prefixes.find(basename_of(word));
  return it == prefixes.end() ? nullptr : &*it;
}

bool takes_argument(const Prefix& prefix, std::string_view option) {
  for (const std::string& candidate : prefix.second) {
    if (candidate == option) return true;
  }
  return false;
}

// Skips the options (and, for env, the assignments) after a prefix word;
// returns the index of the next word.
std::size_t skip_prefix_options(const Prefix& prefix, const std::vector<std::string>& words,
                                std::size_t i) {
  while (i < words.size()) {
    const std::string& word = words[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (!(word.size() > 1 && word[0] == '-') && !is_assignment(word)) break;
    i += takes_argument(prefix, word) ? 2U : 1U;
  }
  const auto& with_operand = precheck_rules().prefix_with_operand;
  if (with_operand.find(prefix.first) != with_operand.end()) ++i;  // the duration
  return i;
}

}  // namespace

Lexed lex(std::string_view text) { return Lexer(text).run(); }

std::vector<SimpleCommand> simple_commands(const std::vector<Token>& tokens) {
  std::vector<SimpleCommand> commands;
  SimpleCommand current;
  auto flush = [&](std::string next_operator) {
    current.next_operator = std::move(next_operator);
    if (!current.words.empty() || !current.write_targets.empty() || !current.read_sources.empty()) {
      commands.push_back(std::move(current));
    }
    current = SimpleCommand{};
  };
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& token = tokens[i];
    if (token.kind == TokenKind::kWord) {
      current.words.push_back(token.text);
    } else if (is_redirection(token.text)) {
      if (i + 1 < tokens.size() && tokens[i + 1].kind == TokenKind::kWord) {
        if (writes_file(token.text, tokens[i + 1].text)) {
          current.write_targets.push_back(tokens[i + 1].text);
        } else if (token.text == "<" || token.text == "<<<") {
          current.read_sources.push_back(tokens[i + 1].text);
        }
        ++i;
      }
    } else {
      flush(token.text);
    }
  }
  flush("");
  return commands;
}

std::vector<std::string> strip_launch_prefixes(const std::vector<std::string>& words) {
  std::size_t i = 0;
  while (i < words.size()) {
    const std::string& word = words[i];
    if (is_assignment(word) || is_reserved_word(word)) {
      ++i;
      continue;
    }
    const Prefix* prefix = find_prefix(word);
    if (prefix == nullptr) break;
    i = skip_prefix_options(*prefix, words, i + 1);
  }
  if (i >= words.size()) return {};
  return {words.begin() + static_cast<std::ptrdiff_t>(i), words.end()};
}

std::string_view basename_of(std::string_view word) {
  const std::size_t slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

bool is_assignment(std::string_view word) {
  if (word.empty() || !(ascii::is_alpha(word[0]) || word[0] == '_')) return false;
  for (std::size_t i = 1; i < word.size(); ++i) {
    const char c = word[i];
    if (c == '=') return true;
    if (c == '+') return i + 1 < word.size() && word[i + 1] == '=';
    if (!(ascii::is_alnum(c) || c == '_')) return false;
  }
  return false;
}

}  // namespace o4s::host::shell

namespace o4s::host {

std::vector<std::string> shell_words(std::string_view command) {
  try {
    shell::Lexed lexed = shell::lex(command);
    std::vector<std::string> words;
    if (!lexed.balanced) {
      // An unbalanced quote makes the shell structure unknowable; a plain
      // whitespace split still shows every path-like word to the callers.
      std::size_t i = 0;
      while (i < command.size()) {
        while (i < command.size() && ascii::is_space(command[i])) ++i;
        std::size_t start = i;
        while (i < command.size() && !ascii::is_space(command[i])) ++i;
        if (i > start) words.emplace_back(command.substr(start, i - start));
      }
      return words;
    }
    words.reserve(lexed.tokens.size());
    for (shell::Token& token : lexed.tokens) words.push_back(std::move(token.text));
    return words;
  } catch (...) {
    return {};
  }
}

}  // namespace o4s::host
