// The HMAC check of an incoming Jupyter message, done before xeus parses
// it. xeus 2.4 parses the JSON first and then compares only as many bytes
// of the signature frame as the digest has: a valid signature followed by
// anything was accepted, and a short one was read past its end.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace o4s::jupyter {

class SignatureCheck {
 public:
  // The connection file's `signature_scheme` ("hmac-sha256") and `key`. An
  // empty key means messages are not signed (Jupyter's convention); a
  // scheme OpenSSL does not know accepts nothing.
  SignatureCheck(const std::string& scheme, std::string key);

  // `frames`: one message as a ROUTER socket receives it (identities,
  // "<IDS|MSG>", signature, header, parent header, metadata, content,
  // buffers). True when it has that shape and its signature frame is
  // exactly the hex HMAC of the four parts, compared in constant time.
  bool accepts(const std::vector<std::string_view>& frames) const {
    return why_refused(frames).empty();
  }
  // Why `frames` is refused (for the log), or empty when it is accepted.
  std::string_view why_refused(const std::vector<std::string_view>& frames) const;

 private:
  std::string digest_;        // OpenSSL's name ("sha256"); empty when unknown
  std::size_t hex_size_ = 0;  // the signature frame's one valid length
  std::string key_;
};

}  // namespace o4s::jupyter
