#include "jupyter/message_signature.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <memory>

namespace o4s::jupyter {

namespace {

constexpr std::string_view kDelimiter = "<IDS|MSG>";
constexpr std::string_view kHmacPrefix = "hmac-";

struct MacDeleter {
  void operator()(EVP_MAC* mac) const { EVP_MAC_free(mac); }
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};

// The hex HMAC of `parts` (lowercase, as jupyter_client writes it), or
// empty when OpenSSL cannot compute it.
std::string hex_hmac(const std::string& digest, const std::string& key,
                     const std::string_view* parts, std::size_t count) {
  std::unique_ptr<EVP_MAC, MacDeleter> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) return {};
  std::unique_ptr<EVP_MAC_CTX, MacDeleter> ctx(EVP_MAC_CTX_new(mac.get()));
  if (!ctx) return {};
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(digest.c_str()), 0),
      OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                   params) != 1) {
    return {};
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(parts[i].data()),
                       parts[i].size()) != 1) {
      return {};
    }
  }
  unsigned char out[EVP_MAX_MD_SIZE];
  std::size_t length = 0;
  if (EVP_MAC_final(ctx.get(), out, &length, sizeof out) != 1) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (std::size_t i = 0; i < length; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 0xf];
  }
  return hex;
}

}  // namespace

SignatureCheck::SignatureCheck(const std::string& scheme, std::string key) : key_(std::move(key)) {
  if (scheme.compare(0, kHmacPrefix.size(), kHmacPrefix) != 0) return;
  digest_ = scheme.substr(kHmacPrefix.size());
  EVP_MD* md = EVP_MD_fetch(nullptr, digest_.c_str(), nullptr);
  if (md == nullptr) {
    digest_.clear();
    return;
  }
  hex_size_ = 2 * static_cast<std::size_t>(EVP_MD_get_size(md));
  EVP_MD_free(md);
}

std::string_view SignatureCheck::why_refused(const std::vector<std::string_view>& frames) const {
  std::size_t delimiter = 0;
  while (delimiter < frames.size() && frames[delimiter] != kDelimiter) ++delimiter;
  if (delimiter == frames.size()) return "no <IDS|MSG> delimiter";
  // The signature and the four signed parts follow the delimiter.
  if (delimiter + 6 > frames.size()) return "fewer than five frames after the delimiter";
  if (key_.empty()) return {};
  if (digest_.empty()) return "the connection file's signature scheme is not an HMAC OpenSSL knows";
  const std::string_view signature = frames[delimiter + 1];
  // The length is no secret (the scheme names it): a frame of another
  // length is refused before the HMAC is spent on a flood.
  if (signature.size() != hex_size_) return "the signature does not match";
  std::string expected = hex_hmac(digest_, key_, &frames[delimiter + 2], 4);
  if (expected.empty()) return "the connection file's signature scheme is unknown to OpenSSL";
  // Exactly the digest's length, then every byte compared whatever the
  // first difference.
  if (signature.size() != expected.size() ||
      CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) != 0) {
    return "the signature does not match";
  }
  return {};
}

}  // namespace o4s::jupyter
