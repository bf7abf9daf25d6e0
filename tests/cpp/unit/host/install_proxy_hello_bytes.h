// Hand-built TLS ClientHello records for the install proxy's tests: the
// fields a real client sends, in the order RFC 8446 gives them, with the
// lengths the test chooses (so a test can also lie about them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace o4s::host::hello_bytes {

// `value` as `size` big-endian bytes.
inline std::string be(std::uint32_t value, std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = size; i-- > 0; value >>= 8) out[i] = static_cast<char>(value & 0xff);
  return out;
}

// `body` with its length in front, in `size` bytes.
inline std::string vec(const std::string& body, std::size_t size) {
  return be(static_cast<std::uint32_t>(body.size()), size) + body;
}

inline std::string extension(std::uint16_t type, const std::string& data) {
  return be(type, 2) + vec(data, 2);
}

// A server_name extension listing these host_names.
inline std::string server_names(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& name : names) list += be(0, 1) + vec(name, 2);
  return extension(0, vec(list, 2));
}

// What a TLS 1.3 client sends besides its name: supported_versions and
// supported_groups.
inline std::string usual_extensions() {
  return extension(43, vec(be(0x0304, 2) + be(0x0303, 2), 1)) +
         extension(10, vec(be(0x001d, 2) + be(0x0017, 2), 2));
}

// The handshake message (type 1) with this extensions block's contents.
inline std::string hello_message(const std::string& extensions) {
  std::string body = be(0x0303, 2) + std::string(32, '\x11') + vec(std::string(32, '\x22'), 1) +
                     vec(be(0x1301, 2) + be(0x1302, 2), 2) + vec(std::string(1, '\0'), 1) +
                     vec(extensions, 2);
  return be(1, 1) + vec(body, 3);
}

// A handshake record carrying `payload`.
inline std::string record(const std::string& payload) {
  return be(22, 1) + be(0x0301, 2) + vec(payload, 2);
}

// A whole first record naming `name` (none when empty).
inline std::string hello_naming(const std::string& name) {
  std::string extensions = usual_extensions();
  if (!name.empty()) extensions = server_names({name}) + extensions;
  return record(hello_message(extensions));
}

}  // namespace o4s::host::hello_bytes
