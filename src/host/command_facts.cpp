// What a shell command touches, for the capability payload and the egress
// check (§6.3 step 13, §6.4): the hosts of its http(s) URLs and a coarse
// category for the audit trail.
#include <string>
#include <string_view>
#include <vector>

#include "base/ascii.h"
#include "host/precheck.h"
#include "host/shell_lexer.h"

namespace o4s::host {

namespace {

// Where a URL's authority ends: path, query, fragment, or text that cannot
// be part of a URL written in a shell command.
bool ends_authority(char c) {
  return c == '/' || c == '?' || c == '#' || c == '\\' || c == ' ' || c == '\t' || c == '\n' ||
         c == '\r' || c == '\'' || c == '"' || c == '`' || c == '<' || c == '>' || c == ';' ||
         c == '|' || c == '&' || c == '(' || c == ')' || c == '{' || c == '}' || c == ',';
}

// The host of an authority: userinfo dropped (https://user:pw@evil.example
// goes to evil.example), port dropped, IPv6 brackets removed, lowercased,
// trailing dots removed.
std::string host_of(std::string_view authority) {
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority = authority.substr(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    authority =
        authority.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
  } else {
    authority = authority.substr(0, authority.find(':'));
  }
  std::string host = ascii::lowered(authority);
  while (!host.empty() && host.back() == '.') host.pop_back();
  return host;
}

bool is_one_of(std::string_view word, std::initializer_list<std::string_view> set) {
  for (std::string_view item : set) {
    if (word == item) return true;
  }
  return false;
}

// An output redirection (">" or ">>", not the descriptor copy ">&").
bool redirects_output(std::string_view command) {
  const shell::Lexed lexed = shell::lex(command);
  if (lexed.balanced) {
    for (const shell::Token& token : lexed.tokens) {
      if (token.kind == shell::TokenKind::kOperator && token.text.find('>') != std::string::npos &&
          token.text.back() != '&') {
        return true;
      }
    }
    return false;
  }
  for (const std::string& word : shell_words(command)) {
    const bool punctuation = word.find_first_not_of("<>|&;") == std::string::npos;
    if (punctuation && word.find('>') != std::string::npos && word.back() != '&') return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> extract_domains(std::string_view command) {
  std::vector<std::string> domains;
  try {
    for (std::size_t i = 0; i < command.size(); ++i) {
      if (!ascii::matches_lower_at(command, i, "http")) continue;
      std::size_t start = i + 4;
      if (start < command.size() && ascii::to_lower(command[start]) == 's') ++start;
      if (command.substr(start, 3) != "://") continue;
      start += 3;
      std::size_t end = start;
      while (end < command.size() && !ends_authority(command[end])) ++end;
      std::string host = host_of(command.substr(start, end - start));
      bool seen = host.empty();
      for (const std::string& domain : domains) seen = seen || domain == host;
      if (!seen) domains.push_back(std::move(host));
      i = end > i ? end - 1 : i;
    }
  } catch (...) {
    // Allocation failure: what was found so far.
  }
  return domains;
}

std::string command_category(std::string_view command, const std::vector<std::string>& domains) {
  try {
    const std::vector<std::string> words = shell_words(command);
    const std::string executable =
        words.empty() ? std::string() : std::string(shell::basename_of(words.front()));
    if (!domains.empty() || is_one_of(executable, {"curl", "wget", "ssh", "scp", "ftp"})) {
      return "network";
    }
    if (is_one_of(executable, {"pip", "pip3", "conda", "mamba", "npm", "uv"})) {
      for (const std::string& word : words) {
        if (is_one_of(word, {"install", "add", "sync"})) return "package_install";
      }
    }
    if (is_one_of(executable, {"rm", "mv", "cp", "mkdir", "touch", "chmod", "chown"}) ||
        redirects_output(command)) {
      return "filesystem_write";
    }
    if (is_one_of(executable, {"cat", "head", "tail", "less", "ls", "find", "grep", "rg"})) {
      return "filesystem_read";
    }
  } catch (...) {
    // Allocation failure: the catch-all category.
  }
  return "process";
}

}  // namespace o4s::host
