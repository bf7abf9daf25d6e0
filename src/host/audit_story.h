// What the audit log tells a person about one host call (spec host.md §7.4
// keeps the machine's previews; these columns are the human reading): what
// the call was about, and how it ended. Bounded and redacted here, once.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/result.h"

namespace o4s::host {

// What a call was about: a bash command (secrets redacted), a path, a
// host name; nullopt for calls with nothing a person needs to see, and for
// secret methods.
std::optional<std::string> call_summary(const std::string& method, const nlohmann::json& args);

// How a call ended: "ok", "allowed" (a shell capability, before the command
// runs), "denied[: why]" for a permission refusal, "error: <why>" for a
// call the handler soft-failed or an error.
std::string call_outcome(const std::string& method, const Result<nlohmann::json>& outcome);

}  // namespace o4s::host
