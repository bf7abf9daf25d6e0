// What the install proxy (install_proxy.h) lets through, as pure functions:
// the request head a client inside the install sandbox sends (CONNECT for
// https, an absolute-form request for plain http), the configured sources
// it may reach (host and port, nothing else), and each address a source's
// name resolves to (judged by the egress policy before the proxy connects
// to exactly that address, so a name cannot be re-resolved elsewhere).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "host/egress_policy.h"

namespace o4s::host {

// One place an install may reach: a configured source URL's origin.
struct ProxyTarget {
  bool tls = false;  // https: reached through CONNECT only
  std::string host;  // lower case, IPv6 without brackets
  std::uint16_t port = 0;

  std::string text() const;  // "host:port", IPv6 bracketed
};

// The origin of a source URL ("https://pypi.org/simple" -> pypi.org:443).
Result<ProxyTarget> proxy_target_of(std::string_view url);

// The origins an install from these source URLs may reach: each URL's own,
// plus the file host of an index that serves its files from another one
// (pypi.org's links point at files.pythonhosted.org).
std::vector<ProxyTarget> install_targets(const std::vector<std::string>& urls);

inline constexpr std::size_t kMaxProxyHeadBytes = 16 * 1024;

struct ProxyRequest {
  bool tunnel = false;  // CONNECT host:port
  ProxyTarget target;
  std::string method;
  // For plain http: the head to send to the origin (origin-form request
  // line, no proxy headers, "Connection: close"); empty for a tunnel.
  std::string origin_head;
  // For plain http: the body after the head (its Content-Length), the
  // only bytes after the head that reach the origin.
  std::uint64_t body_bytes = 0;
};

// `head` is everything up to and including the blank line. A malformed or
// oversized head, a scheme other than http in absolute form, a request
// that names no host, or a body of no one clear length (chunked, two
// Content-Lengths) is an error saying so.
Result<ProxyRequest> parse_proxy_request(std::string_view head);

// Why `request` may not go out (nullopt: it may): its origin must be one of
// `targets` exactly, https through CONNECT and http as a plain request.
std::optional<std::string> refuse_request(const std::vector<ProxyTarget>& targets,
                                          const ProxyRequest& request);

// Why the proxy may not connect to `address` for `host` (nullopt: it may):
// the egress policy's address check (private and loopback ranges refused
// unless the policy opens them).
std::optional<std::string> refuse_address(const EgressPolicy& policy, std::string_view host,
                                          const IpAddress& address);

}  // namespace o4s::host
