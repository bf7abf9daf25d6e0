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

// Brackets and strings (with backslash escapes; backquoted names), skipping
// comments. Enough to tell an open construct from a closed one; the worker's
// parser decides everything finer.
Scan scan(std::string_view code) {
  Scan state;
  char quote = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (quote) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '#') {
      while (i < code.size() && code[i] != '\n') ++i;
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
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

}  // namespace

nlohmann::json early_r_is_complete(std::string_view code) {
  Scan state = scan(code);
  if (state.mismatched) return {{"status", "invalid"}};
  if (state.in_string || !state.open.empty() || ends_with_r_operator(last_code_line(code))) {
    return {{"status", "incomplete"}, {"indent", ""}};
  }
  return {{"status", "complete"}};
}

}  // namespace o4s::jupyter
