#include "host/env_sources.h"

#include <netdb.h>
#include <sys/socket.h>

#include <cmath>
#include <cstdlib>

#include "base/ascii.h"
#include "host/dispatcher.h"
#include "host/egress_address.h"
#include "host/egress_policy.h"
#include "sandbox/sandbox_settings.h"

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

// What `host` resolves to (a literal stands for itself). A name that does
// not resolve is an unreachable source.
Result<std::vector<IpAddress>> addresses_of(const std::string& host) {
  if (auto literal = parse_ip(host)) return std::vector<IpAddress>{*literal};
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the source host " + host + " does not resolve: " + gai_strerror(rc));
  }
  std::vector<IpAddress> addresses;
  for (addrinfo* it = found; it != nullptr; it = it->ai_next) {
    if (auto address = ip_of(it->ai_addr)) addresses.push_back(*address);
  }
  ::freeaddrinfo(found);
  return addresses;
}

// The installer connects on its own (pip, R), not through web_get's
// per-connect check, so a source's every address is judged here, by the
// egress module's classes; OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES opens them all.
Status refuse_private_source(std::string_view url, const std::string& host) {
  auto addresses = addresses_of(host);
  if (!addresses) return std::move(addresses).error();
  for (const IpAddress& address : addresses.value()) {
    if (auto kind = non_public_kind(address)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the package source " + std::string(url) +
                            " is a loopback or private address (" + address.text() + ", " +
                            std::string(*kind) +
                            "); set OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES=1 to allow it");
    }
  }
  return {};
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
    if (!is_url(dir) && dir.front() != '/') {
      return bad_setting("OPENAI4S_ENV_R_REPOS", dir,
                         "an R repository is an absolute directory of source packages or a "
                         "CRAN-like URL");
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
    // The sandbox's own size syntax (OPENAI4S_KERNEL_MEMORY_LIMIT's), less "none".
    auto bytes = sandbox::parse_size(size);
    if (!bytes || !bytes.value() || *bytes.value() == 0) {
      return bad_setting("OPENAI4S_ENV_MAX_BYTES", size, "expected a size like 512M");
    }
    sources.max_bytes = *bytes.value();
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
  const std::string host = normalized_domain(url);
  if (!allow_private && !host.empty()) {
    if (Status refused = refuse_private_source(url, host); !refused) return refused;
  }
  // Then the same judge as web_fetch and web_download: http(s) only, the
  // host on the grouped allowlist or OPENAI4S_EGRESS_ALLOW (or egress off).
  // Addresses were judged above, by the environment's own setting.
  auto policy = make_egress_policy(settings.egress_mode, settings.egress_allow, "0.0.0.0/0 ::/0");
  if (!policy) return std::move(policy).error();
  EgressDecision decision = decide_url(*policy, url);
  if (!decision.allowed) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the package source " + std::string(url) + ": " + decision.message);
  }
  return {};
}

}  // namespace o4s::host
