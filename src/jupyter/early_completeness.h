// is_complete answered while the worker is still starting. jupyter console
// gives the kernel one second for its first is_complete answer and, past
// that, stops asking for the whole session (every cell then needs an extra
// Enter); an R worker in its sandbox takes longer than that to boot. So until
// the worker is up, the kernel answers from the brackets, strings and the
// last line alone, and the worker's own parser answers every request after.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace o4s::jupyter {

// An is_complete_reply content ({"status": complete | incomplete | invalid,
// "indent" when incomplete}): incomplete while a bracket or string is open,
// after a trailing operator (R) or a line continuation or block header
// (Python), inside an indented Python block; invalid for a closing bracket
// that closes nothing.
nlohmann::json early_is_complete(std::string_view code, bool r_language);

}  // namespace o4s::jupyter
