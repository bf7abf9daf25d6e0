// is_complete answered while the worker is still starting. jupyter console
// gives the kernel one second for its first is_complete answer and, past
// that, stops asking for the whole session (every cell then needs an extra
// Enter); an R worker in its sandbox takes longer than that to boot. So until
// the worker is up, an R kernel answers from the brackets, strings and the
// last line alone, and the worker's own parser answers every request after.
// (A Python worker is up in a fraction of a second: its kernel waits for it,
// so that codeop's answers, `invalid` included, are exact from the start.)
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace o4s::jupyter {

// An is_complete_reply content for R code ({"status": complete | incomplete
// | invalid, "indent" when incomplete}): incomplete while a bracket or string
// is open or after a trailing operator or `else`; invalid for a closing
// bracket that closes nothing.
nlohmann::json early_r_is_complete(std::string_view code);

}  // namespace o4s::jupyter
