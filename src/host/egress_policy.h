// The egress policy: the one judge of every network use the host makes on
// a cell's behalf (web_fetch, web_download, package sources, the shell
// capability's URL check). Pure: the caller builds an EgressPolicy from
// its settings and the session's grants, then asks about a URL before
// connecting and about each address it is about to connect to (after DNS,
// for every redirect hop), so a name that resolves into the host's own
// network is refused however it was spelled.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "host/egress_address.h"

namespace o4s::host {

enum class EgressMode {
  kAllowlist,  // the grouped allowlist, the configured extras and the session's grants
  kOff,        // any public host (an explicit opt-in)
};

// OPENAI4S_EGRESS: "off", "0", "false", "no", "none", "open" -> off; anything
// else, unset included -> allowlist (our default; an unknown word fails closed).
EgressMode parse_egress_mode(std::string_view value);

struct EgressPolicy {
  EgressMode mode = EgressMode::kAllowlist;
  std::vector<std::string> extra_domains;    // OPENAI4S_EGRESS_ALLOW
  std::vector<std::string> session_domains;  // granted by request_network_access
  std::vector<IpRange> private_allowed;      // OPENAI4S_EGRESS_ALLOW_PRIVATE
};

// From the three settings; a malformed OPENAI4S_EGRESS_ALLOW_PRIVATE entry
// is an error naming it.
Result<EgressPolicy> make_egress_policy(std::string_view mode, std::string_view allow,
                                        std::string_view allow_private);

struct EgressDecision {
  bool allowed = false;
  std::string url;      // normalised by curl's own parser: what a client must fetch
  std::string host;     // lower case, no trailing dot, IPv6 without brackets
  std::string basis;    // when allowed: "allowlist", "configured", "session", "off"
  std::string message;  // when refused: why, and how to allow it
};

// Before connecting: scheme (http/https only), a literal address's class,
// and the host against the allowlist.
EgressDecision decide_url(const EgressPolicy& policy, std::string_view url);

// After DNS, before each connect: a non-public address is refused unless
// OPENAI4S_EGRESS_ALLOW_PRIVATE lists it. `host` names it in the message.
EgressDecision decide_address(const EgressPolicy& policy, std::string_view host,
                              const IpAddress& address);

// Why a host name may be reached ("allowlist", "configured", "session",
// "off"), or nullopt when the policy refuses it. No DNS, no address check.
std::optional<std::string> domain_basis(const EgressPolicy& policy, std::string_view host);

// The refusal text for a host the allowlist does not cover.
std::string egress_refusal(std::string_view host);

// A user-supplied domain ("Example.org.", "*.example.org", "https://x/y")
// reduced to the host a grant or an extra entry stands for; "" if none.
std::string normalized_domain(std::string_view text);

}  // namespace o4s::host
