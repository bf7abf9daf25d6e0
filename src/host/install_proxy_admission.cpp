#include "host/install_proxy_admission.h"

#include <curl/curl.h>

#include <memory>

#include "base/ascii.h"

namespace o4s::host {

namespace {

Error malformed(std::string why) {
  return make_error(ErrorCode::kInvalidArgument, "a malformed proxy request: " + std::move(why));
}

bool is_token_char(char c) {
  return ascii::is_alnum(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_host_char(char c) { return ascii::is_alnum(c) || c == '-' || c == '.'; }

// "host:port" or "[v6]:port", as a CONNECT line or an absolute URL carries it.
Result<ProxyTarget> parse_authority(std::string_view text, std::uint16_t default_port) {
  ProxyTarget target;
  std::string_view port;
  if (text.starts_with('[')) {
    auto close = text.find(']');
    if (close == std::string_view::npos) return malformed("an unclosed IPv6 address");
    auto address = parse_ip(text.substr(0, close + 1));
    if (!address || !address->v6) return malformed("not an IPv6 address");
    target.host = address->text();
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return malformed("junk after the address");
    if (!rest.empty()) port = rest.substr(1);
  } else {
    auto colon = text.rfind(':');
    std::string_view host = text.substr(0, colon);
    if (colon != std::string_view::npos) port = text.substr(colon + 1);
    if (host.empty() || host.size() > 253) return malformed("no host");
    for (char c : host) {
      if (!is_host_char(c)) return malformed("a character a host name cannot hold");
    }
    target.host = ascii::lowered(host);
    while (target.host.ends_with('.')) target.host.pop_back();
  }
  if (port.empty()) {
    if (default_port == 0) return malformed("no port");
    target.port = default_port;
    return target;
  }
  unsigned value = 0;
  if (port.size() > 5) return malformed("not a port");
  for (char c : port) {
    if (!ascii::is_digit(c)) return malformed("not a port");
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) return malformed("not a port");
  target.port = static_cast<std::uint16_t>(value);
  return target;
}

// The head's lines, CRLF-separated; a bare CR or LF, or any other control
// character but a tab, is malformed (request smuggling lives there).
Result<std::vector<std::string_view>> head_lines(std::string_view head) {
  if (head.size() > kMaxProxyHeadBytes) return malformed("its head is over 16 KiB");
  if (!head.ends_with("\r\n\r\n")) return malformed("its head does not end with a blank line");
  std::vector<std::string_view> lines;
  std::string_view rest = head.substr(0, head.size() - 4);
  for (;;) {
    auto end = rest.find("\r\n");
    std::string_view line = rest.substr(0, end);
    for (char c : line) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
        return malformed("a control character in its head");
      }
    }
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 2);
  }
  return lines;
}

bool dropped_header(std::string_view name) {
  std::string lower = ascii::lowered(name);
  return lower == "host" || lower == "connection" || lower == "keep-alive" ||
         lower == "proxy-connection" || lower == "proxy-authorization" || lower == "te" ||
         lower == "upgrade";
}

// The request to send the origin: origin-form, our Host, one request only.
Result<std::string> origin_head(std::string_view method, std::string_view path,
                                const ProxyTarget& target,
                                const std::vector<std::string_view>& headers) {
  std::string head = std::string(method) + " " + std::string(path) + " HTTP/1.1\r\n";
  head += "Host: " + target.text() + "\r\n";
  for (std::string_view line : headers) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return malformed("a header without a name");
    for (char c : line.substr(0, colon)) {
      if (!is_token_char(c)) return malformed("a header name with a bad character");
    }
    if (dropped_header(line.substr(0, colon))) continue;
    head += std::string(line) + "\r\n";
  }
  return head + "Connection: close\r\n\r\n";
}

// How many body bytes follow the head: its Content-Length, or none. A
// chunked body (its end known only by reading it) or two lengths that
// disagree would leave the proxy and the origin counting differently,
// and what one takes for body the other could take for a second request.
Result<std::uint64_t> declared_body(const std::vector<std::string_view>& headers) {
  std::optional<std::uint64_t> length;
  for (std::string_view line : headers) {
    auto colon = line.find(':');
    std::string name = ascii::lowered(line.substr(0, colon));
    if (name == "transfer-encoding") return malformed("a request body of unknown length");
    if (name != "content-length") continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (value.empty() || value.size() > 15) return malformed("a bad Content-Length");
    std::uint64_t number = 0;
    for (char c : value) {
      if (!ascii::is_digit(c)) return malformed("a bad Content-Length");
      number = number * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (length && *length != number) return malformed("two Content-Lengths");
    length = number;
  }
  return length.value_or(0);
}

}  // namespace

std::string ProxyTarget::text() const {
  std::string name = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return name + ":" + std::to_string(port);
}

Result<ProxyTarget> proxy_target_of(std::string_view url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> handle(curl_url(), &curl_url_cleanup);
  const std::string text(url);
  if (!handle || curl_url_set(handle.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) {
    return make_error(ErrorCode::kInvalidArgument, "not a URL: " + text);
  }
  auto part = [&](CURLUPart which, unsigned flags) {
    char* value = nullptr;
    std::string out;
    if (curl_url_get(handle.get(), which, &value, flags) == CURLUE_OK && value != nullptr) {
      out = value;
    }
    curl_free(value);
    return out;
  };
  std::string scheme = ascii::lowered(part(CURLUPART_SCHEME, 0));
  if (scheme != "http" && scheme != "https") {
    return make_error(ErrorCode::kInvalidArgument, "not an http(s) URL: " + text);
  }
  std::string host = ascii::lowered(part(CURLUPART_HOST, 0));
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  std::string port = part(CURLUPART_PORT, CURLU_DEFAULT_PORT);
  ProxyTarget target{scheme == "https", host, static_cast<std::uint16_t>(std::stoi(port))};
  while (target.host.ends_with('.')) target.host.pop_back();
  return target;
}

std::vector<ProxyTarget> install_targets(const std::vector<std::string>& urls) {
  std::vector<ProxyTarget> targets;
  for (const auto& url : urls) {
    auto target = proxy_target_of(url);
    if (!target) continue;
    targets.push_back(*target);
    // PyPI's pages link its files on another host; both are on the
    // egress allowlist's package-index group.
    if (target->host == "pypi.org") targets.push_back({true, "files.pythonhosted.org", 443});
  }
  return targets;
}

Result<ProxyRequest> parse_proxy_request(std::string_view head) {
  auto lines = head_lines(head);
  if (!lines) return std::move(lines).error();
  std::string_view line = lines->front();
  auto first = line.find(' ');
  auto last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) return malformed("a bad request line");
  std::string_view method = line.substr(0, first);
  std::string_view uri = line.substr(first + 1, last - first - 1);
  std::string_view version = line.substr(last + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return malformed("not HTTP/1.x");
  if (method.empty() || uri.empty() || uri.find(' ') != std::string_view::npos) {
    return malformed("a bad request line");
  }
  for (char c : method) {
    if (!is_token_char(c)) return malformed("a bad method");
  }
  ProxyRequest request;
  request.method = std::string(method);
  if (method == "CONNECT") {
    auto target = parse_authority(uri, 0);
    if (!target) return std::move(target).error();
    request.tunnel = true;
    request.target = std::move(*target);
    request.target.tls = true;
    return request;
  }
  constexpr std::string_view kHttp = "http://";
  if (uri.size() < kHttp.size() || ascii::lowered(uri.substr(0, kHttp.size())) != kHttp) {
    return malformed("a plain request must name an http:// URL");
  }
  std::string_view rest = uri.substr(kHttp.size());
  auto path_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_at);
  if (authority.find('@') != std::string_view::npos) return malformed("credentials in the URL");
  auto target = parse_authority(authority, 80);
  if (!target) return std::move(target).error();
  request.target = std::move(*target);
  std::string path = path_at == std::string_view::npos ? "/" : std::string(rest.substr(path_at));
  if (path.front() == '?') path.insert(0, "/");
  std::vector<std::string_view> headers(lines->begin() + 1, lines->end());
  auto forward = origin_head(method, path, request.target, headers);
  if (!forward) return std::move(forward).error();
  auto body = declared_body(headers);
  if (!body) return std::move(body).error();
  request.origin_head = std::move(*forward);
  request.body_bytes = *body;
  return request;
}

std::optional<std::string> refuse_request(const std::vector<ProxyTarget>& targets,
                                          const ProxyRequest& request) {
  for (const auto& target : targets) {
    if (target.host == request.target.host && target.port == request.target.port &&
        target.tls == request.tunnel) {
      return std::nullopt;
    }
  }
  return request.target.text() + " is not a configured package source of this install";
}

std::optional<std::string> refuse_address(const EgressPolicy& policy, std::string_view host,
                                          const IpAddress& address) {
  EgressDecision decision = decide_address(policy, host, address);
  if (decision.allowed) return std::nullopt;
  return decision.message;
}

}  // namespace o4s::host
