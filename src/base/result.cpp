#include "base/result.h"

#include <cstring>

namespace o4s {

Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message), 0, nullptr};
}

Error system_error(std::string what, int err) {
  // strerrorname_np gives the symbolic name (EACCES), which greps better than
  // the localised description.
  const char* name = strerrorname_np(err);
  what += ": ";
  what += name != nullptr ? name : std::strerror(err);
  return Error{ErrorCode::kSystem, std::move(what), err, nullptr};
}

}  // namespace o4s
