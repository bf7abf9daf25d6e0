// The shared lexer knows <<< but not <<: it would read a here-document's body
// as commands. So before lexing each one is rewritten in place as the
// here-string of its body (bash <<EOF\n$CMD\nEOF becomes bash <<< "$CMD"):
// an unquoted delimiter expands the body, so it becomes a double-quoted word
// whose $, $(...) and backquotes stay visible; a quoted one (<<'EOF') does
// not, so it becomes a single-quoted word. <<- strips leading tabs. The
// worker's precheck_heredoc.py does the same, step for step. One forward
// pass; a body whose delimiter line never comes leaves the text as it was
// (its lines are then read as commands, the closed side).
#pragma once

#include <string>
#include <string_view>

namespace o4s::host {

// `text` with each here-document replaced by a here-string.
std::string inline_heredocs(std::string_view text);

}  // namespace o4s::host
