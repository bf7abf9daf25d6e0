#include "jupyter/error_parts.h"

#include <string_view>

#include "base/ascii.h"

namespace o4s::jupyter {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.emplace_back(text, start, end - start);
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// A Python exception name: a dotted identifier ("ValueError",
// "json.decoder.JSONDecodeError").
bool looks_like_exception_name(std::string_view name) {
  if (name.empty()) return false;
  bool at_start = true;
  for (char c : name) {
    if (c == '.') {
      if (at_start) return false;
      at_start = true;
      continue;
    }
    if (!(ascii::is_alnum(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80)) return false;
    if (at_start && ascii::is_digit(c)) return false;
    at_start = false;
  }
  return !at_start;
}

}  // namespace

ErrorParts split_error(const std::string& error_text, bool interrupted) {
  ErrorParts parts;
  parts.traceback = split_lines(error_text);
  if (parts.traceback.empty()) parts.traceback.push_back(error_text);
  if (interrupted) {
    parts.ename = "KeyboardInterrupt";
    parts.evalue = "";
    return parts;
  }
  // The exception line is the last one that is not indented (a SyntaxError
  // ends with its caret lines, which are).
  for (auto it = parts.traceback.rbegin(); it != parts.traceback.rend(); ++it) {
    const std::string& line = *it;
    if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;
    std::size_t colon = line.find(':');
    std::string_view head = std::string_view(line).substr(0, colon);
    // "SystemExit trapped (worker kept alive): 3"
    std::size_t space = head.find(' ');
    std::string_view name = head.substr(0, space);
    if (!looks_like_exception_name(name)) continue;
    // The class's own name, as ipykernel reports it ("StdinNotImplementedError",
    // not "openai4s.kernel.runtime.errors.StdinNotImplementedError"); the
    // traceback keeps the full path.
    std::size_t dot = name.rfind('.');
    parts.ename = std::string(dot == std::string_view::npos ? name : name.substr(dot + 1));
    if (colon != std::string::npos) {
      std::size_t value = colon + 1;
      if (value < line.size() && line[value] == ' ') ++value;
      parts.evalue = line.substr(value);
      if (space != std::string_view::npos) parts.evalue = line;
    } else if (space != std::string_view::npos) {
      parts.evalue = line;
    }
    return parts;
  }
  parts.ename = "Error";
  parts.evalue = parts.traceback.back();
  return parts;
}

}  // namespace o4s::jupyter
