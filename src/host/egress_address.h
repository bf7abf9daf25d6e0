// IP addresses as the egress policy judges them: which ones are private,
// loopback, link-local or otherwise not the public internet (the host must
// not be steered into its own network: SSRF), and the CIDR ranges a
// configuration may open anyway (OPENAI4S_EGRESS_ALLOW_PRIVATE).
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace o4s::host {

struct IpAddress {
  bool v6 = false;
  // IPv4 in bytes 0-3; IPv6 in all 16.
  std::array<std::uint8_t, 16> bytes{};

  std::string text() const;
};

struct IpRange {
  IpAddress base;
  int prefix = 0;  // bits

  bool contains(const IpAddress& address) const;
};

// A literal IPv4 or IPv6 address ("[::1]" brackets allowed); nullopt for a name.
std::optional<IpAddress> parse_ip(std::string_view text);
// From a socket address curl is about to connect to; nullopt for other families.
std::optional<IpAddress> ip_of(const sockaddr* address);

// "10.0.0.0/8", "::1", "127.0.0.1" (a single address is a full-length prefix).
Result<IpRange> parse_ip_range(std::string_view text);
// Comma- or blank-separated ranges; an entry that is not one is an error
// that names it (a typo must not silently leave a range closed or open).
Result<std::vector<IpRange>> parse_ip_ranges(std::string_view text);

// Why `address` is not a public internet address ("loopback",
// "private", "link-local", ...), or nullopt when it is one. IPv4-mapped
// and NAT64 IPv6 forms are judged by the IPv4 address they carry.
std::optional<std::string_view> non_public_kind(const IpAddress& address);

}  // namespace o4s::host
