#include "host/precheck_heredoc.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace o4s::host {

namespace {

constexpr std::string_view kWordEnds = " \t\n;&|<>()";

struct PendingHeredoc {
  std::size_t slot = 0;  // index in the output pieces of its here-string
  std::string delimiter;
  bool quoted = false;
  bool strip_tabs = false;
};

// End of the quoted span, escape or arithmetic at i (i + 1 for a plain
// character): the shell sees no << inside them.
std::size_t skip_quoted(std::string_view text, std::size_t i) {
  const std::size_t n = text.size();
  const char c = text[i];
  if (c == '\\') return std::min(i + 2, n);
  if (c == '\'') {
    const std::size_t end = text.find('\'', i + 1);
    return end == std::string_view::npos ? n : end + 1;
  }
  if (c == '"') {
    std::size_t j = i + 1;
    while (j < n && text[j] != '"') j += text[j] == '\\' ? 2U : 1U;
    return std::min(j + 1, n);
  }
  if (text.substr(i, 2) == "((") {  // $((1<<2)), ((x <<= 1)): arithmetic
    const std::size_t end = text.find("))", i + 2);
    return end == std::string_view::npos ? n : end + 2;
  }
  return i + 1;
}

// After << at i: records the here-document and leaves a slot in `out` for
// its here-string (text goes on in a new last piece). Returns the index
// after the delimiter.
std::size_t read_delimiter(std::string_view text, std::size_t i,
                           std::vector<PendingHeredoc>& pending, std::vector<std::string>& out) {
  const std::size_t n = text.size();
  PendingHeredoc heredoc;
  heredoc.strip_tabs = i < n && text[i] == '-';
  if (heredoc.strip_tabs) ++i;
  while (i < n && (text[i] == ' ' || text[i] == '\t')) ++i;
  bool any = false;
  while (i < n && kWordEnds.find(text[i]) == std::string_view::npos) {
    const std::size_t end = skip_quoted(text, i);
    const char c = text[i];
    if (c == '\'' || c == '"' || c == '\\') {
      heredoc.quoted = true;
      const std::size_t close = c == '\\' ? end : std::max(end - 1, i + 1);
      heredoc.delimiter.append(text.substr(i + 1, close - (i + 1)));
    } else {
      heredoc.delimiter.append(text.substr(i, end - i));
    }
    any = true;
    i = end;
  }
  if (!any) {
    out.back().append("<<");  // no word: not a here-document the shell accepts
    return i;
  }
  heredoc.slot = out.size();
  out.emplace_back();  // the slot
  out.emplace_back();  // the text after it
  pending.push_back(std::move(heredoc));
  return i;
}

std::string heredoc_as_word(std::string_view body, bool quoted) {
  std::string word(1, quoted ? '\'' : '"');
  for (char c : body) {
    if (quoted && c == '\'') {
      word.append("'\\''");
    } else if (!quoted && (c == '\\' || c == '"')) {
      word.append(1, '\\').append(1, c);
    } else {
      word.push_back(c);
    }
  }
  word.push_back(quoted ? '\'' : '"');
  return word;
}

// Reads the bodies of the pending here-documents from i on, in order, and
// fills their slots. Returns the index after the last delimiter line, or
// npos when one never comes.
std::size_t read_bodies(std::string_view text, std::size_t i,
                        const std::vector<PendingHeredoc>& pending, std::vector<std::string>& out) {
  const std::size_t n = text.size();
  for (const PendingHeredoc& heredoc : pending) {
    std::string body;
    bool first = true;
    for (;;) {
      if (i >= n) return std::string_view::npos;
      std::size_t end = text.find('\n', i);
      if (end == std::string_view::npos) end = n;
      std::string_view line = text.substr(i, end - i);
      i = end + 1;
      if (heredoc.strip_tabs)
        line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
      if (line == heredoc.delimiter) break;
      body.append(first ? "" : "\n").append(line);
      first = false;
    }
    out[heredoc.slot] = "<<< " + heredoc_as_word(body, heredoc.quoted);
  }
  return std::min(i, n);
}

}  // namespace

std::string inline_heredocs(std::string_view text) {
  if (text.find("<<") == std::string_view::npos) return std::string(text);
  std::vector<std::string> out(1);  // text pieces, appended to at the back
  std::vector<PendingHeredoc> pending;
  std::size_t i = 0;
  const std::size_t n = text.size();
  bool word_start = true;
  while (i < n) {
    const char c = text[i];
    if (c == '\n' && !pending.empty()) {
      out.back().push_back('\n');
      i = read_bodies(text, i + 1, pending, out);
      if (i == std::string_view::npos) return std::string(text);
      pending.clear();
      word_start = true;
    } else if (text.substr(i, 3) == "<<<") {
      out.back().append("<<<");
      i += 3;
    } else if (text.substr(i, 2) == "<<") {
      i = read_delimiter(text, i + 2, pending, out);
    } else if (c == '#' && word_start) {
      std::size_t end = text.find('\n', i);
      if (end == std::string_view::npos) end = n;
      out.back().append(text.substr(i, end - i));
      i = end;
    } else {
      const std::size_t end = skip_quoted(text, i);
      out.back().append(text.substr(i, end - i));
      word_start = kWordEnds.find(c) != std::string_view::npos;
      i = end;
    }
  }
  if (!pending.empty()) return std::string(text);
  std::string joined;
  joined.reserve(n);
  for (const std::string& piece : out) joined.append(piece);
  return joined;
}

}  // namespace o4s::host
