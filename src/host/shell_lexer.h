// A small POSIX-shell lexer shared by the static precheck (§6.5), the
// secret-file check (§6.6) and the command category (§6.4). It is not a
// shell: it knows quotes, backslashes, comments, $(...) and `...`, control
// operators and redirections, which is enough to tell a command from data
// (`echo "rm -rf /"` is one argument to echo). One forward pass, no regex,
// so the time is linear in the input and nothing backtracks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace o4s::host::shell {

enum class TokenKind { kWord, kOperator };

struct Token {
  TokenKind kind = TokenKind::kWord;
  std::string text;  // quotes and escapes removed; a newline operator is ";"
};

struct Lexed {
  std::vector<Token> tokens;
  // The text outside quotes with whitespace kept as single spaces, quoted
  // parts as '' or "" and substitutions as $(): the fork bomb is a shape of
  // unquoted punctuation, so it is matched here and not on the raw text.
  std::string skeleton;
  // Bodies of $(...) and `...` (outside single quotes): they run, so the
  // callers analyse them as commands too.
  std::vector<std::string> nested;
  bool balanced = true;  // every quote and substitution was closed
};

Lexed lex(std::string_view text);

// One simple command: its words (redirections removed), the targets of its
// output and input redirections, and the control operator that ends it (""
// at the end).
struct SimpleCommand {
  std::vector<std::string> words;
  std::vector<std::string> write_targets;  // > >> >| &> &>> <> and >&file
  std::vector<std::string> read_sources;   // < <<< (a here-string feeds stdin)
  std::string next_operator;
};

std::vector<SimpleCommand> simple_commands(const std::vector<Token>& tokens);

// `words` without leading assignments, launch prefixes (sudo, env, nice,
// timeout, ...) and reserved words ({, !, if, then, do, ...): what runs.
std::vector<std::string> strip_launch_prefixes(const std::vector<std::string>& words);

// The part after the last '/'.
std::string_view basename_of(std::string_view word);

// NAME= or NAME+= at the start of a word (a shell variable assignment).
bool is_assignment(std::string_view word);

}  // namespace o4s::host::shell
