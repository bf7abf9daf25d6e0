#include "jupyter/early_completeness.h"

#include <string>
#include <vector>

namespace o4s::jupyter {
namespace {

struct Scan {
  std::vector<char> open;  // the brackets still open, innermost last
  bool in_string = false;
  bool mismatched = false;
};

char closer_of(char opener) { return opener == '(' ? ')' : opener == '[' ? ']' : '}'; }

bool triple_at(std::string_view code, std::size_t i, char quote) {
  return quote != '`' && i + 2 < code.size() && code[i + 1] == quote && code[i + 2] == quote;
}

// Brackets and strings (with backslash escapes; Python's triple quotes; R's
// backquoted names), skipping comments. Enough to tell an open construct from
// a closed one; the worker's parser decides everything finer.
Scan scan(std::string_view code, bool r_language) {
  Scan state;
  char quote = 0;
  bool triple = false;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote && (!triple || triple_at(code, i, quote))) {
        if (triple) i += 2;
        quote = 0;
      } else if (c == '\n' && !triple && !r_language) {
        state.mismatched = true;  // a Python one-quote string cannot span lines
        quote = 0;
      }
      continue;
    }
    if (c == '#') {
      while (i < code.size() && code[i] != '\n') ++i;
    } else if (c == '\'' || c == '"' || (r_language && c == '`')) {
      quote = c;
      triple = !r_language && triple_at(code, i, c);
      if (triple) i += 2;
    } else if (c == '(' || c == '[' || c == '{') {
      state.open.push_back(c);
    } else if (c == ')' || c == ']' || c == '}') {
      if (state.open.empty() || closer_of(state.open.back()) != c) state.mismatched = true;
      if (!state.open.empty()) state.open.pop_back();
    }
  }
  state.in_string = quote != 0;
  return state;
}

// The last line that holds code, without its comment and trailing blanks.
std::string_view last_code_line(std::string_view code) {
  while (!code.empty()) {
    auto newline = code.rfind('\n');
    std::string_view line = newline == std::string_view::npos ? code : code.substr(newline + 1);
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (!line.empty()) return line;
    if (newline == std::string_view::npos) break;
    code = code.substr(0, newline);
  }
  return {};
}

bool ends_with_r_operator(std::string_view line) {
  if (line.empty()) return false;
  static constexpr std::string_view kOperatorEnds = "+-*/^<>=!&|~,$@:%";
  if (kOperatorEnds.find(line.back()) != std::string_view::npos) return true;
  // `if (a) b else` and the like wait for their expression.
  return line.size() >= 4 && line.substr(line.size() - 4) == "else" &&
         (line.size() == 4 || line[line.size() - 5] == ' ' || line[line.size() - 5] == '}');
}

std::string leading_blanks(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return std::string(line.substr(0, n));
}

bool ends_with_blank_line(std::string_view code) {
  auto newline = code.rfind('\n');
  if (newline == std::string_view::npos) return false;
  return code.find_first_not_of(" \t\r", newline + 1) == std::string_view::npos;
}

nlohmann::json incomplete(std::string indent) {
  return {{"status", "incomplete"}, {"indent", std::move(indent)}};
}

}  // namespace

nlohmann::json early_is_complete(std::string_view code, bool r_language) {
  Scan state = scan(code, r_language);
  if (state.mismatched) return {{"status", "invalid"}};
  if (state.in_string || !state.open.empty()) return incomplete("");
  std::string_view last = last_code_line(code);
  if (r_language) {
    if (ends_with_r_operator(last)) return incomplete("");
    return {{"status", "complete"}};
  }
  if (!last.empty() && last.back() == '\\') return incomplete(leading_blanks(last));
  if (!last.empty() && last.back() == ':') return incomplete(leading_blanks(last) + "    ");
  // Inside an indented block the cell goes on until a blank line ends it.
  if (!leading_blanks(last).empty() && !ends_with_blank_line(code)) {
    return incomplete(leading_blanks(last));
  }
  return {{"status", "complete"}};
}

}  // namespace o4s::jupyter
