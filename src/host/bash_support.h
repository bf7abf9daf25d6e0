// Pieces of the shell capability service (§6.3, §6.4) that need no service
// state: strict path resolution, the bearer token, and the safe audit record
// built from a worker's report.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/result.h"

namespace o4s::host::bash {

using Json = nlohmann::json;

// Strict resolution and containment are o4s::real_path / o4s::path_contains
// (base/paths.h): a symlink that leaves the workspace resolves to where it
// really points.
bool is_directory(const std::string& resolved);

// URL-safe base64 (no padding) of `bytes` bytes from getrandom; "" when the
// kernel has no entropy to give, which the caller turns into a refusal.
std::string random_url_safe_token(std::size_t bytes);

// The only things persisted from a worker's report (§6.4 "Safe audit
// record"); `capability` supplies the bindings, `report` is untrusted.
Json safe_record(const Json& capability, const Json& report);

}  // namespace o4s::host::bash
