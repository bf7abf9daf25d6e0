#include "host/egress_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace o4s::host {

namespace {

struct Special {
  std::string_view range;
  std::string_view kind;
};

// IANA special-purpose registries (RFC 6890 and successors): everything
// here is either the host itself, its networks, or not routable on the
// public internet. Cloud metadata services live in 169.254.0.0/16.
constexpr Special kSpecialV4[] = {
    {"0.0.0.0/8", "unspecified"},         {"10.0.0.0/8", "private"},
    {"100.64.0.0/10", "shared (CGNAT)"},  {"127.0.0.0/8", "loopback"},
    {"169.254.0.0/16", "link-local"},     {"172.16.0.0/12", "private"},
    {"192.0.0.0/24", "IETF protocol"},    {"192.0.2.0/24", "documentation"},
    {"192.168.0.0/16", "private"},        {"198.18.0.0/15", "benchmarking"},
    {"198.51.100.0/24", "documentation"}, {"203.0.113.0/24", "documentation"},
    {"224.0.0.0/4", "multicast"},         {"240.0.0.0/4", "reserved"},
};
constexpr Special kSpecialV6[] = {
    {"::/128", "unspecified"},          {"::1/128", "loopback"},     {"fc00::/7", "private (ULA)"},
    {"fe80::/10", "link-local"},        {"fec0::/10", "site-local"}, {"ff00::/8", "multicast"},
    {"2001:db8::/32", "documentation"}, {"100::/64", "discard"},
};

// The IPv4 address an IPv6 form carries (mapped ::ffff:a.b.c.d,
// compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d), if any.
std::optional<IpAddress> embedded_v4(const IpAddress& address) {
  if (!address.v6) return std::nullopt;
  const auto& b = address.bytes;
  static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr std::uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  static constexpr std::uint8_t kZero[12] = {};
  bool carries = std::memcmp(b.data(), kMapped, 12) == 0 || std::memcmp(b.data(), kNat64, 12) == 0;
  // ::a.b.c.d, but not :: and ::1 themselves (judged as IPv6 above).
  if (std::memcmp(b.data(), kZero, 12) == 0 && (b[12] | b[13] | b[14]) != 0) carries = true;
  if (!carries) return std::nullopt;
  IpAddress v4;
  std::memcpy(v4.bytes.data(), b.data() + 12, 4);
  return v4;
}

std::vector<std::pair<IpRange, std::string_view>> compiled(const Special* begin,
                                                           const Special* end) {
  std::vector<std::pair<IpRange, std::string_view>> out;
  for (const Special* s = begin; s != end; ++s)
    out.emplace_back(*parse_ip_range(s->range), s->kind);
  return out;
}

}  // namespace

std::string IpAddress::text() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buffer, sizeof buffer);
  return buffer;
}

bool IpRange::contains(const IpAddress& address) const {
  if (address.v6 != base.v6) return false;
  int bits = prefix;
  for (std::size_t i = 0; bits > 0; ++i, bits -= 8) {
    const std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
    if ((address.bytes[i] & mask) != (base.bytes[i] & mask)) return false;
  }
  return true;
}

std::optional<IpAddress> parse_ip(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string owned(text);
  IpAddress address;
  if (::inet_pton(AF_INET, owned.c_str(), address.bytes.data()) == 1) return address;
  address.v6 = true;
  if (::inet_pton(AF_INET6, owned.c_str(), address.bytes.data()) == 1) return address;
  return std::nullopt;
}

std::optional<IpAddress> ip_of(const sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  IpAddress ip;
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    std::memcpy(ip.bytes.data(), &in->sin_addr, 4);
    return ip;
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    ip.v6 = true;
    std::memcpy(ip.bytes.data(), &in6->sin6_addr, 16);
    return ip;
  }
  return std::nullopt;
}

Result<IpRange> parse_ip_range(std::string_view text) {
  const auto slash = text.find('/');
  auto address = parse_ip(text.substr(0, slash));
  auto invalid = [&] {
    return make_error(ErrorCode::kInvalidArgument,
                      "'" + std::string(text) + "' is not an IP address or CIDR range");
  };
  if (!address) return invalid();
  const int width = address->v6 ? 128 : 32;
  int prefix = width;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    if (digits.empty() || digits.size() > 3) return invalid();
    prefix = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return invalid();
      prefix = prefix * 10 + (c - '0');
    }
    if (prefix > width) return invalid();
  }
  return IpRange{*address, prefix};
}

Result<std::vector<IpRange>> parse_ip_ranges(std::string_view text) {
  std::vector<IpRange> ranges;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end = text.find_first_of(", \t\n", i);
    const std::string_view entry = text.substr(i, end == std::string_view::npos ? end : end - i);
    if (!entry.empty()) {
      auto range = parse_ip_range(entry);
      if (!range) return std::move(range).error();
      ranges.push_back(*range);
    }
    if (end == std::string_view::npos) break;
    i = end + 1;
  }
  return ranges;
}

std::optional<std::string_view> non_public_kind(const IpAddress& address) {
  static const auto v4 = compiled(std::begin(kSpecialV4), std::end(kSpecialV4));
  static const auto v6 = compiled(std::begin(kSpecialV6), std::end(kSpecialV6));
  if (auto carried = embedded_v4(address)) return non_public_kind(*carried);
  for (const auto& [range, kind] : address.v6 ? v6 : v4) {
    if (range.contains(address)) return kind;
  }
  return std::nullopt;
}

}  // namespace o4s::host
