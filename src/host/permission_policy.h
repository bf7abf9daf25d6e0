// Permission resolution (spec host.md §4.2): any matching deny wins, else
// the most specific matching rule, else ask.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace o4s::host {

enum class Decision { kAllow, kAsk, kDeny };

std::string_view decision_name(Decision decision);

// Empty pattern or "*" matches everything; exact equality matches; else a
// case-sensitive fnmatch-style glob ("*", "?", "[...]"); a bad glob is a
// non-match.
bool pattern_matches(std::string_view pattern, std::string_view target);

Decision resolve_permission(const std::vector<store::PermissionRule>& rules, std::string_view tool,
                            std::string_view target);

}  // namespace o4s::host
