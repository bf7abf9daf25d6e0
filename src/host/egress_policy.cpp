#include "host/egress_policy.h"

#include <curl/curl.h>

#include <memory>

#include "base/ascii.h"
#include "host/egress.h"

namespace o4s::host {

namespace {

std::string trimmed_lower(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r\n");
  auto last = text.find_last_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return ascii::lowered(text.substr(first, last - first + 1));
}

// `host` is `domain` or a subdomain of it (both normalised).
bool within(std::string_view host, std::string_view domain) {
  if (domain.empty()) return false;
  if (host == domain) return true;
  // An IP literal stands for itself only.
  if (parse_ip(domain)) return false;
  return host.size() > domain.size() && host.substr(host.size() - domain.size()) == domain &&
         host[host.size() - domain.size() - 1] == '.';
}

bool any_within(std::string_view host, const std::vector<std::string>& domains) {
  for (const std::string& domain : domains) {
    if (within(host, domain)) return true;
  }
  return false;
}

std::vector<std::string> domain_list(std::string_view text) {
  std::vector<std::string> domains;
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t end = text.find_first_of(", \t\n", i);
    const std::string_view entry = text.substr(i, end == std::string_view::npos ? end : end - i);
    if (std::string domain = normalized_domain(entry); !domain.empty()) {
      domains.push_back(std::move(domain));
    }
    if (end == std::string_view::npos) break;
    i = end + 1;
  }
  return domains;
}

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
struct CurlFree {
  void operator()(char* text) const { curl_free(text); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;
using CurlText = std::unique_ptr<char, CurlFree>;

std::optional<std::string> url_part(CURLU* url, CURLUPart part, unsigned flags = 0) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, flags) != CURLUE_OK || text == nullptr) return std::nullopt;
  CurlText owned(text);
  return std::string(owned.get());
}

EgressDecision refused(std::string host, std::string message) {
  EgressDecision decision;
  decision.host = std::move(host);
  decision.message = std::move(message);
  return decision;
}

}  // namespace

EgressMode parse_egress_mode(std::string_view value) {
  const std::string word = trimmed_lower(value);
  for (std::string_view off : {"off", "0", "false", "no", "none", "open"}) {
    if (word == off) return EgressMode::kOff;
  }
  return EgressMode::kAllowlist;
}

std::string normalized_domain(std::string_view text) {
  std::string domain = trimmed_lower(text);
  if (auto scheme = domain.find("://"); scheme != std::string::npos) {
    domain = domain.substr(scheme + 3);
  }
  domain = domain.substr(0, domain.find_first_of("/?#"));
  if (auto at = domain.rfind('@'); at != std::string::npos) domain = domain.substr(at + 1);
  if (domain.rfind("*.", 0) == 0) domain = domain.substr(2);
  while (!domain.empty() && domain.front() == '.') domain.erase(0, 1);
  if (!domain.empty() && domain.front() == '[') {
    domain = domain.substr(
        1, domain.find(']') == std::string::npos ? std::string::npos : domain.find(']') - 1);
  } else if (auto colon = domain.find(':');
             colon != std::string::npos && domain.find(':', colon + 1) == std::string::npos) {
    domain = domain.substr(0, colon);  // a port; an IPv6 literal has several colons
  }
  while (!domain.empty() && domain.back() == '.') domain.pop_back();
  for (char c : domain) {
    if (!(ascii::is_alnum(c) || c == '.' || c == '-' || c == ':' || c == '_')) return {};
  }
  return domain;
}

Result<EgressPolicy> make_egress_policy(std::string_view mode, std::string_view allow,
                                        std::string_view allow_private) {
  EgressPolicy policy;
  policy.mode = parse_egress_mode(mode);
  policy.extra_domains = domain_list(allow);
  auto ranges = parse_ip_ranges(allow_private);
  if (!ranges) {
    return make_error(ErrorCode::kInvalidArgument,
                      "OPENAI4S_EGRESS_ALLOW_PRIVATE: " + ranges.error().message);
  }
  policy.private_allowed = std::move(ranges).value();
  return policy;
}

std::optional<std::string> domain_basis(const EgressPolicy& policy, std::string_view host) {
  const std::string name = normalized_domain(host);
  if (name.empty()) return std::nullopt;
  if (any_within(name, policy.extra_domains)) return "configured";
  if (any_within(name, policy.session_domains)) return "session";
  if (!parse_ip(name) && egress_domain_allowed(name)) return "allowlist";
  if (policy.mode == EgressMode::kOff) return "off";
  return std::nullopt;
}

std::string egress_refusal(std::string_view host) {
  const std::string h(host);
  return "outbound network access to '" + h +
         "' is blocked by the egress allowlist (OPENAI4S_EGRESS=allowlist): it is not on the "
         "science / package-index / data-repository allowlist. Call "
         "host.request_network_access('" +
         h +
         "', reason='...') to ask the user to allow it for this session, or add it to "
         "OPENAI4S_EGRESS_ALLOW.";
}

EgressDecision decide_address(const EgressPolicy& policy, std::string_view host,
                              const IpAddress& address) {
  EgressDecision decision;
  decision.host = std::string(host);
  auto kind = non_public_kind(address);
  if (!kind) {
    decision.allowed = true;
    return decision;
  }
  for (const IpRange& range : policy.private_allowed) {
    if (range.contains(address)) {
      decision.allowed = true;
      decision.basis = "private-allowed";
      return decision;
    }
  }
  const std::string text = address.text();
  const std::string where =
      host == text ? "'" + text + "' is" : "'" + std::string(host) + "' resolves to " + text + ",";
  decision.message = where + " a " + std::string(*kind) +
                     " address: the host does not reach its own or private networks for a cell "
                     "unless OPENAI4S_EGRESS_ALLOW_PRIVATE lists it";
  return decision;
}

EgressDecision decide_url(const EgressPolicy& policy, std::string_view url) {
  UrlHandle handle(curl_url());
  if (!handle) return refused("", "out of memory parsing the URL");
  const std::string text(url);
  if (text.empty() || text.size() > 8192 ||
      curl_url_set(handle.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) {
    return refused("", "not a valid absolute http(s) URL: '" + text.substr(0, 200) + "'");
  }
  const std::string scheme = ascii::lowered(url_part(handle.get(), CURLUPART_SCHEME).value_or(""));
  if (scheme != "http" && scheme != "https") {
    return refused("", "only http and https URLs are fetched, not '" + scheme + ":'");
  }
  std::string host = normalized_domain(url_part(handle.get(), CURLUPART_HOST).value_or(""));
  if (host.empty()) return refused("", "the URL names no usable host: '" + text + "'");
  if (auto literal = parse_ip(host)) {
    EgressDecision address = decide_address(policy, host, *literal);
    if (!address.allowed) return address;
  }
  auto basis = domain_basis(policy, host);
  if (!basis) return refused(host, egress_refusal(host));
  EgressDecision decision;
  decision.allowed = true;
  decision.host = host;
  decision.basis = *basis;
  decision.url = url_part(handle.get(), CURLUPART_URL).value_or(text);
  return decision;
}

}  // namespace o4s::host
