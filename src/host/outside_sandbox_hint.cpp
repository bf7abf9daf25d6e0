#include "host/outside_sandbox_hint.h"

#include <sys/stat.h>

#include <cstdlib>

#include "host/approval_text.h"

namespace o4s::host {
namespace {

constexpr std::string_view kPythonNotFound =
    "FileNotFoundError: [Errno 2] No such file or directory: ";
constexpr std::string_view kROpen = "cannot open file '";
constexpr std::string_view kRNotFound = "': No such file or directory";

std::string_view last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  auto newline = text.rfind('\n');
  return newline == std::string_view::npos ? text : text.substr(newline + 1);
}

std::optional<unsigned> hex_value(std::string_view digits) {
  unsigned value = 0;
  for (char c : digits) {
    value <<= 4;
    if (c >= '0' && c <= '9')
      value |= static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      value |= static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      value |= static_cast<unsigned>(c - 'A' + 10);
    else
      return std::nullopt;
  }
  return value;
}

void append_code_point(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The escape after a backslash at text[i] (i indexes the letter); appends
// its character and returns the index after it, or nullopt for one this
// reader does not know (the hint is then skipped, never guessed).
std::optional<std::size_t> read_escape(std::string_view text, std::size_t i, std::string& out) {
  if (i >= text.size()) return std::nullopt;
  const char c = text[i];
  switch (c) {
    case '\\':
    case '\'':
    case '"':
      out += c;
      return i + 1;
    case 'n':
      out += '\n';
      return i + 1;
    case 't':
      out += '\t';
      return i + 1;
    case 'r':
      out += '\r';
      return i + 1;
    default:
      break;
  }
  const std::size_t width = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
  if (width == 0 || i + 1 + width > text.size()) return std::nullopt;
  auto cp = hex_value(text.substr(i + 1, width));
  if (!cp || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return std::nullopt;
  append_code_point(out, *cp);
  return i + 1 + width;
}

// The str literal repr() wrote: quoted with ' or ", backslash escapes.
std::optional<std::string> python_string_literal(std::string_view text) {
  if (text.size() < 2 || (text.front() != '\'' && text.front() != '"')) return std::nullopt;
  const char quote = text.front();
  std::string out;
  std::size_t i = 1;
  while (i < text.size()) {
    const char c = text[i];
    if (c == quote) return i + 1 == text.size() ? std::optional(out) : std::nullopt;
    if (c != '\\') {
      out += c;
      ++i;
      continue;
    }
    auto next = read_escape(text, i + 1, out);
    if (!next) return std::nullopt;
    i = *next;
  }
  return std::nullopt;
}

std::optional<std::string> r_missing_path(std::string_view text) {
  auto not_found = text.rfind(kRNotFound);
  if (not_found == std::string_view::npos) return std::nullopt;
  auto open = text.rfind(kROpen, not_found);
  if (open == std::string_view::npos) return std::nullopt;
  auto start = open + kROpen.size();
  auto path = text.substr(start, not_found - start);
  if (path.empty() || path.find('\n') != std::string_view::npos) return std::nullopt;
  return std::string(path);
}

std::string host_path(const std::string& path, const std::string& cwd) {
  if (path.rfind("~/", 0) == 0 || path == "~") {
    const char* home = std::getenv("HOME");
    if (home && *home) return std::string(home) + path.substr(1);
  }
  if (!path.empty() && path.front() == '/') return path;
  std::string joined = cwd;
  if (joined.empty() || joined.back() != '/') joined += '/';
  joined += path;
  return joined;
}

}  // namespace

std::optional<std::string> missing_path_in(std::string_view error_text) {
  auto line = last_line(error_text);
  if (line.substr(0, kPythonNotFound.size()) == kPythonNotFound) {
    return python_string_literal(line.substr(kPythonNotFound.size()));
  }
  return r_missing_path(error_text);
}

std::optional<std::string> outside_sandbox_hint(std::string_view error_text,
                                                const std::string& cwd) {
  auto path = missing_path_in(error_text);
  if (!path || path->empty() || path->find('\0') != std::string::npos) return std::nullopt;
  struct stat info {};
  if (::stat(host_path(*path, cwd).c_str(), &info) != 0) return std::nullopt;
  // The path is shown as the cell wrote it; controls in it are escaped so a
  // cell cannot draw on the person's terminal through the hint.
  std::string shown = escape_for_display(*path);
  std::string hint = "hint: ";
  hint.append(shown)
      .append(" exists on this machine but is outside the sandbox; copy it into the workspace (")
      .append(escape_for_display(cwd))
      .append(") or add its directory to OPENAI4S_KERNEL_SANDBOX_READ_PATHS\n");
  return hint;
}

}  // namespace o4s::host
