// A worker's error text as Jupyter's error triple (ename, evalue,
// traceback). The worker sends one formatted traceback string (spec
// kernel.md §4.8); clients want the exception's name and value apart.
#pragma once

#include <string>
#include <vector>

namespace o4s::jupyter {

struct ErrorParts {
  std::string ename;
  std::string evalue;
  std::vector<std::string> traceback;  // one entry per line, no newlines
};

// `interrupted` is the response's flag: a delivered SIGINT reads as
// KeyboardInterrupt whatever the text says.
ErrorParts split_error(const std::string& error_text, bool interrupted);

}  // namespace o4s::jupyter
