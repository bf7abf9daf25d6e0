// Why a sandboxed cell did not find a file that is plainly on this machine:
// the sandbox shows a cell only its workspace and a few read-only paths, so a
// path that exists for the person at the keyboard is missing for the cell.
// One line says so, for the front doors whose client is that person (the
// REPL, Jupyter). Not for an MCP agent: to an agent that writes the cells,
// the hint would tell whether any host path exists.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace o4s::host {

// The path a failed cell reported missing: the last line of a Python
// traceback (`FileNotFoundError: [Errno 2] No such file or directory: 'p'`,
// the path a Python string literal) or R's warning
// (`cannot open file 'p': No such file or directory`). nullopt otherwise.
std::optional<std::string> missing_path_in(std::string_view error_text);

// One line (ending in "\n") when `error_text` reports a missing path that
// exists on the host, resolved against the host path of the cell's working
// directory `cwd`; nullopt otherwise. Only meaningful for a sandboxed
// kernel: the caller asks only then.
std::optional<std::string> outside_sandbox_hint(std::string_view error_text,
                                                const std::string& cwd);

}  // namespace o4s::host
