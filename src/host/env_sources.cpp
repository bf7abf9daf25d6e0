#include "host/env_sources.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cmath>
#include <cstring>

#include "base/ascii.h"
#include "host/dispatcher.h"
#include "host/egress.h"
#include "host/egress_policy.h"

namespace o4s::host {

namespace {

std::string trimmed(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> comma_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string item = trimmed(text.substr(start, end - start));
    if (!item.empty()) items.push_back(std::move(item));
    start = end + 1;
  }
  return items;
}

std::string lookup(const std::map<std::string, std::string>& variables, std::string_view name) {
  auto it = variables.find(std::string(name));
  return it == variables.end() ? std::string() : trimmed(it->second);
}

Error bad_setting(std::string_view name, const std::string& value, std::string_view why) {
  return make_error(ErrorCode::kInvalidArgument,
                    std::string(name) + "=" + value + ": " + std::string(why));
}

// "512M", "2G", "4096" (binary multiples).
std::optional<std::uint64_t> parse_bytes(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value <= 0) return std::nullopt;
  std::string unit = ascii::lowered(trimmed(end));
  double scale = 1;
  if (unit == "k" || unit == "kb")
    scale = 1024.0;
  else if (unit == "m" || unit == "mb")
    scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb")
    scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty())
    return std::nullopt;
  return static_cast<std::uint64_t>(value * scale);
}

bool private_v4(const in_addr& address) {
  std::uint32_t a = ntohl(address.s_addr);
  auto in = [a](std::uint32_t net, int bits) {
    return bits == 0 || (a >> (32 - bits)) == (net >> (32 - bits));
  };
  return in(0x7f000000, 8) || in(0x0a000000, 8) || in(0xac100000, 12) || in(0xc0a80000, 16) ||
         in(0xa9fe0000, 16) || in(0x64400000, 10) || in(0x00000000, 8) || in(0xe0000000, 4) ||
         in(0xf0000000, 4);
}

bool private_v6(const in6_addr& address) {
  const unsigned char* b = address.s6_addr;
  if (IN6_IS_ADDR_LOOPBACK(&address) || IN6_IS_ADDR_UNSPECIFIED(&address) ||
      IN6_IS_ADDR_LINKLOCAL(&address) || IN6_IS_ADDR_MULTICAST(&address)) {
    return true;
  }
  if ((b[0] & 0xfe) == 0xfc) return true;  // unique local fc00::/7
  if (IN6_IS_ADDR_V4MAPPED(&address)) {
    in_addr v4{};
    std::memcpy(&v4.s_addr, b + 12, 4);
    return private_v4(v4);
  }
  return false;
}

// The URL's host ("[::1]" -> "::1"), lowercased; empty when there is none.
std::string url_host(std::string_view url) {
  auto scheme_end = url.find("://");
  std::string_view rest = url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    return close == std::string_view::npos ? std::string()
                                           : ascii::lowered(rest.substr(1, close - 1));
  }
  return ascii::lowered(rest.substr(0, rest.find(':')));
}

// Whether `host` (a literal or a name, resolved here) is a loopback,
// link-local or private address. A name that does not resolve is an
// unreachable source.
Result<bool> names_private_address(const std::string& host) {
  if (host == "localhost" || (host.size() > 10 && host.ends_with(".localhost"))) return true;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the source host " + host + " does not resolve: " + gai_strerror(rc));
  }
  bool any_private = false;
  for (addrinfo* it = found; it != nullptr; it = it->ai_next) {
    if (it->ai_family == AF_INET) {
      any_private |= private_v4(reinterpret_cast<sockaddr_in*>(it->ai_addr)->sin_addr);
    } else if (it->ai_family == AF_INET6) {
      any_private |= private_v6(reinterpret_cast<sockaddr_in6*>(it->ai_addr)->sin6_addr);
    }
  }
  ::freeaddrinfo(found);
  return any_private;
}

}  // namespace

bool is_url(std::string_view source) { return source.find("://") != std::string_view::npos; }

bool EnvSources::any_url() const {
  if (!pip_index_url.empty()) return true;
  for (const auto& link : find_links) {
    if (is_url(link)) return true;
  }
  return false;
}

std::string EnvSources::describe() const {
  std::string text;
  auto part = [&text](const std::string& label, const std::vector<std::string>& items) {
    if (items.empty()) return;
    if (!text.empty()) text += "; ";
    text += label;
    for (std::size_t i = 0; i < items.size(); ++i) text += (i ? ", " : " ") + items[i];
  };
  if (!pip_index_url.empty()) part("index", {pip_index_url});
  part("find-links", find_links);
  part("r-repos", r_repos);
  return text.empty() ? std::string("no source configured") : text;
}

Result<EnvSources> env_sources_from(const std::map<std::string, std::string>& variables) {
  EnvSources sources;
  sources.pip_index_url = lookup(variables, "OPENAI4S_ENV_PIP_INDEX_URL");
  sources.find_links = comma_list(lookup(variables, "OPENAI4S_ENV_FIND_LINKS"));
  sources.r_repos = comma_list(lookup(variables, "OPENAI4S_ENV_R_REPOS"));
  std::string allow = ascii::lowered(lookup(variables, "OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES"));
  sources.allow_private = allow == "1" || allow == "true" || allow == "yes" || allow == "on";
  for (const auto& dir : sources.find_links) {
    if (!is_url(dir) && (dir.empty() || dir.front() != '/')) {
      return bad_setting("OPENAI4S_ENV_FIND_LINKS", dir, "a directory must be absolute");
    }
  }
  for (const auto& dir : sources.r_repos) {
    if (is_url(dir) || dir.front() != '/') {
      return bad_setting("OPENAI4S_ENV_R_REPOS", dir,
                         "an R repository must be an absolute directory of source packages");
    }
  }
  if (std::string timeout = lookup(variables, "OPENAI4S_ENV_TIMEOUT"); !timeout.empty()) {
    char* end = nullptr;
    double value = std::strtod(timeout.c_str(), &end);
    if (*end != '\0' || !std::isfinite(value) || value <= 0) {
      return bad_setting("OPENAI4S_ENV_TIMEOUT", timeout, "expected seconds > 0");
    }
    sources.timeout_s = value;
  }
  if (std::string size = lookup(variables, "OPENAI4S_ENV_MAX_BYTES"); !size.empty()) {
    auto bytes = parse_bytes(size);
    if (!bytes) return bad_setting("OPENAI4S_ENV_MAX_BYTES", size, "expected a size like 512M");
    sources.max_bytes = *bytes;
  }
  if (std::string python = lookup(variables, "OPENAI4S_ENV_PYTHON"); !python.empty()) {
    if (python.front() != '/') {
      return bad_setting("OPENAI4S_ENV_PYTHON", python, "the interpreter must be absolute");
    }
    sources.python = python;
  }
  return sources;
}

Status check_source_url(std::string_view url, const HostSettings& settings, bool allow_private) {
  std::string lowered = ascii::lowered(url);
  if (!lowered.starts_with("http://") && !lowered.starts_with("https://")) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the package source " + std::string(url) + " is not an http(s) URL");
  }
  std::string host = url_host(url);
  if (host.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the package source " + std::string(url) + " names no host");
  }
  if (!allow_private) {
    auto is_private = names_private_address(host);
    if (!is_private) return std::move(is_private).error();
    if (*is_private) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the package source " + std::string(url) +
                            " is a loopback or private address; set "
                            "OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES=1 to allow it");
    }
  }
  // The same judge as web_fetch and web_download (mode, the grouped
  // allowlist, OPENAI4S_EGRESS_ALLOW); the install's own sandbox then gets
  // the network only for this source.
  auto policy = make_egress_policy(settings.egress_mode, settings.egress_allow, "");
  if (!policy) return std::move(policy).error();
  if (!domain_basis(*policy, host)) {
    return make_error(ErrorCode::kInvalidArgument, egress_refusal(host));
  }
  return {};
}

}  // namespace o4s::host
