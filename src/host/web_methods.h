// The web rows of the host method table (issue 30 part 3): web_fetch,
// web_download and request_network_access, and the session's egress
// policy they and any other host-side network use are judged by.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "host/egress_policy.h"

namespace o4s::host {

class HostDispatcher;
struct CallContext;
using Json = nlohmann::json;

// The policy for this call: the embedder's settings (OPENAI4S_EGRESS,
// OPENAI4S_EGRESS_ALLOW, OPENAI4S_EGRESS_ALLOW_PRIVATE) plus the domains
// request_network_access granted in the call's conversation.
Result<EgressPolicy> session_egress_policy(HostDispatcher& host, const CallContext& context);

// The permission tool under which a conversation's grants are kept (one
// conversation-scope "allow" rule per domain; the gate never asks about it).
inline constexpr const char* kEgressGrantTool = "egress";

Result<Json> web_fetch(HostDispatcher& host, const Json& args, const CallContext& context);
Result<Json> web_download(HostDispatcher& host, const Json& args, const CallContext& context);

// Before the gate: a missing or malformed domain is an error, and a domain
// the policy already allows is answered without asking anyone.
std::optional<Json> network_access_before_gate(HostDispatcher& host, const Json& args,
                                               const CallContext& context);
// After an allow: the grant, kept for the conversation.
Result<Json> request_network_access(HostDispatcher& host, const Json& args,
                                    const CallContext& context);
// Appended to a refusal nobody answered: how to allow the domain instead.
std::string network_access_refusal_hint(const Json& args, std::string_view why);

// The audit log's outcome for a finished fetch or download:
// "HTTP 200, 1234 bytes, egress: allowlist".
std::string web_outcome(const Json& result);

}  // namespace o4s::host
