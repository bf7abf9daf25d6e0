// The first TLS record of an install's CONNECT tunnel, as pure functions
// (issue 30 part 2, domain fronting): a tunnel is admitted by its CONNECT
// authority, but the ClientHello that follows names the site the client
// wants (SNI), and a CDN address serves many sites. The install proxy
// reads that first record whole and lets the tunnel on only when the
// hello names the CONNECT host and nothing else, and hides no name (ECH).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace o4s::host {

// A TLS record header: type, version, length.
inline constexpr std::size_t kTlsRecordHeaderBytes = 5;
// TLSPlaintext.length may not exceed 2^14 (RFC 8446 section 5.1).
inline constexpr std::size_t kMaxTlsRecordBytes = 16 * 1024;

// What the ClientHello says about the site it wants.
struct ClientHello {
  std::vector<std::string> server_names;  // each host_name entry, as sent
  bool other_name_types = false;          // an entry of a name type but host_name
  bool encrypted = false;                 // an ECH (or the older ESNI) extension
};

// The whole first record's size (header included) once `head` holds at
// least its 5-byte header; an error when it is not a TLS handshake record
// or claims more than 2^14 bytes. `head` may be shorter: then nullopt
// (read more).
Result<std::optional<std::size_t>> tls_first_record_size(std::string_view head);

// The ClientHello in `record` (one whole record, header included). A
// record that is not a whole ClientHello alone (a hello split over
// records, lengths that overrun or leave bytes over, a repeated extension)
// is an error saying so.
Result<ClientHello> parse_client_hello(std::string_view record);

// Why a tunnel to `host` (lower case, no trailing dot, IPv6 without
// brackets) may not carry this hello (nullopt: it may). A name host needs
// exactly that one name, in any letter case; an address host needs no
// name or its own address text; an encrypted hello is always refused.
std::optional<std::string> refuse_client_hello(std::string_view host, const ClientHello& hello);

}  // namespace o4s::host
