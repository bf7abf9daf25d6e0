// The wall-clock time as records show it to people: ISO 8601 in UTC to
// the second ("2026-12-03T15:59:26Z").
#pragma once

#include <string>

namespace o4s {

std::string utc_timestamp();

}  // namespace o4s
