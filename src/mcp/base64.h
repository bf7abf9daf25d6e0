// Standard base64 (RFC 4648 §4, padded) for file contents and blobs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace o4s::mcp {

std::string base64_encode(std::string_view bytes);
// nullopt for anything that is not padded standard base64 (whitespace is
// not skipped: a client sends one string).
std::optional<std::string> base64_decode(std::string_view text);
// The decoded size of a valid base64 text, without decoding it.
std::size_t base64_decoded_size(std::string_view text);

}  // namespace o4s::mcp
