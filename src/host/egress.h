// The egress allowlist (OPENAI4S_EGRESS=allowlist): science, package-index
// and data-repository domains a shell command may reach without asking.
// Shared by `authorize_bash` (§6.3 step 13) and the `egress_check` method.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace o4s::host {

// True for an allowlisted domain or any subdomain of one (case-insensitive).
bool egress_domain_allowed(std::string_view domain);

// The first domain that is not allowed, if any. `also_allowed`: the
// configured extras and the session's grants (each with its subdomains).
std::optional<std::string> first_blocked_domain(const std::vector<std::string>& domains,
                                                const std::vector<std::string>& also_allowed = {});

// Whether OPENAI4S_EGRESS's value leaves the allowlist on: our default,
// stricter than the reference's (issue 30); only an explicit "off" (or
// "0", "false", "no", "none", "open") turns it off (egress_policy.h).
bool egress_allowlist_mode(std::string_view mode);

// The user-visible refusal for `domain` (the proxy's 403 text).
std::string egress_block_message(std::string_view domain);

}  // namespace o4s::host
