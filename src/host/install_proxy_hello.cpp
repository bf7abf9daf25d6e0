#include "host/install_proxy_hello.h"

#include <cstdint>
#include <set>

#include "base/ascii.h"
#include "host/egress_address.h"

namespace o4s::host {

namespace {

constexpr std::uint8_t kHandshakeRecord = 22;
constexpr std::uint8_t kClientHelloType = 1;
constexpr std::uint16_t kServerNameExtension = 0;
constexpr std::uint8_t kHostNameType = 0;

// encrypted_client_hello (RFC 9849) and the codepoints of its drafts and
// of the ESNI draft before it: each can carry a name the proxy cannot read.
bool hides_a_name(std::uint16_t type) {
  return type == 0xfe0d || (type >= 0xfe08 && type <= 0xfe0c) || type == 0xffce;
}

Error bad(std::string why) {
  return make_error(ErrorCode::kInvalidArgument,
                    "not a TLS ClientHello the install proxy can read: " + std::move(why));
}

// Big-endian fields off the front of a byte range; any read past its end
// leaves the reader failed (and every later read too).
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  bool ok() const { return ok_; }
  bool empty() const { return rest_.empty(); }

  std::uint32_t number(std::size_t size) {
    std::uint32_t value = 0;
    for (char byte : take(size)) value = (value << 8) | static_cast<unsigned char>(byte);
    return value;
  }

  std::string_view take(std::size_t size) {
    if (!ok_ || size > rest_.size()) {
      ok_ = false;
      return {};
    }
    std::string_view out = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return out;
  }

  // The bytes of a vector with a `size_bytes`-long length in front.
  std::string_view opaque(std::size_t size_bytes) { return take(number(size_bytes)); }
  Reader vector(std::size_t size_bytes) {
    std::string_view bytes = opaque(size_bytes);
    return Reader(bytes, ok_);
  }

 private:
  Reader(std::string_view bytes, bool ok) : rest_(bytes), ok_(ok) {}
  std::string_view rest_;
  bool ok_ = true;
};

// The server_name extension's body: a list of (type, name) entries.
Status read_server_names(std::string_view body, ClientHello& hello) {
  Reader outer(body);
  Reader list = outer.vector(2);
  if (!outer.ok() || !outer.empty()) return bad("a server_name extension of the wrong length");
  while (list.ok() && !list.empty()) {
    auto type = list.number(1);
    std::string_view name = list.opaque(2);
    if (!list.ok()) break;
    if (type == kHostNameType) {
      hello.server_names.emplace_back(name);
    } else {
      hello.other_name_types = true;
    }
  }
  if (!list.ok()) return bad("a server_name entry overruns its list");
  return {};
}

}  // namespace

Result<std::optional<std::size_t>> tls_first_record_size(std::string_view head) {
  if (head.empty()) return std::optional<std::size_t>();
  if (static_cast<std::uint8_t>(head[0]) != kHandshakeRecord) {
    return bad("the tunnel's first bytes are not a TLS handshake record");
  }
  if (head.size() < kTlsRecordHeaderBytes) return std::optional<std::size_t>();
  Reader header(head.substr(1, kTlsRecordHeaderBytes - 1));
  auto major = header.number(1);
  header.number(1);  // the minor version: 0 to 4 in the wild, not checked
  auto length = header.number(2);
  if (major != 3) return bad("a record of an unknown protocol version");
  if (length == 0 || length > kMaxTlsRecordBytes) return bad("a record length over 2^14");
  return std::optional<std::size_t>(kTlsRecordHeaderBytes + length);
}

Result<ClientHello> parse_client_hello(std::string_view record) {
  auto size = tls_first_record_size(record);
  if (!size) return std::move(size).error();
  if (!*size || **size != record.size()) return bad("not one whole record");
  Reader payload(record.substr(kTlsRecordHeaderBytes));
  if (payload.number(1) != kClientHelloType) return bad("the first message is not a ClientHello");
  Reader body = payload.vector(3);
  if (!payload.ok()) return bad("a ClientHello split over TLS records");
  if (!payload.empty()) return bad("bytes after the ClientHello in its record");
  body.take(2 + 32);  // legacy_version, random
  body.vector(1);     // legacy_session_id
  body.vector(2);     // cipher_suites
  body.vector(1);     // legacy_compression_methods
  if (!body.ok()) return bad("a ClientHello cut short");
  ClientHello hello;
  if (body.empty()) return hello;  // no extensions at all: no name
  Reader extensions = body.vector(2);
  if (!body.ok() || !body.empty()) return bad("extensions of the wrong length");
  std::set<std::uint16_t> seen;
  while (!extensions.empty()) {
    auto type = static_cast<std::uint16_t>(extensions.number(2));
    std::string_view data = extensions.opaque(2);
    if (!extensions.ok()) return bad("an extension overruns the hello");
    // RFC 8446 4.2: one of each; two server_names could say two things.
    if (!seen.insert(type).second) return bad("an extension sent twice");
    if (hides_a_name(type)) hello.encrypted = true;
    if (type != kServerNameExtension) continue;
    if (Status read = read_server_names(data, hello); !read) return std::move(read).error();
  }
  return hello;
}

std::optional<std::string> refuse_client_hello(std::string_view host, const ClientHello& hello) {
  const std::string tunnel = "the tunnel to " + std::string(host);
  if (hello.encrypted)
    return tunnel + " sends an encrypted ClientHello (ECH), which hides its name";
  if (hello.other_name_types || hello.server_names.size() > 1) {
    return tunnel + " names more than one server in its TLS hello";
  }
  // A literal address has no name (RFC 6066 3); a client may still send
  // the address's own text.
  bool address = parse_ip(host).has_value();
  if (hello.server_names.empty()) {
    if (address) return std::nullopt;
    return tunnel + " names no server in its TLS hello (SNI)";
  }
  // Exactly the name: a trailing dot or any other spelling is another name.
  const std::string& name = hello.server_names.front();
  if (ascii::lowered(name) == host) return std::nullopt;
  std::string shown;
  for (char c : name.substr(0, 100)) shown += ascii::is_alnum(c) || c == '.' || c == '-' ? c : '?';
  return tunnel + " names another server in its TLS hello: " + shown;
}

}  // namespace o4s::host
