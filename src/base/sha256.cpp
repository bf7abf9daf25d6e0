#include "base/sha256.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace o4s {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (state_->ctx == nullptr || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1) {
    std::abort();  // libcrypto without SHA-256 is a broken installation
  }
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view data) {
  EVP_DigestUpdate(state_->ctx, data.data(), data.size());
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(state_->ctx, digest, &size);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 digest;
  digest.update(data);
  return digest.hex_digest();
}

Result<std::string> sha256_fd(int fd, const std::string& what) {
  Sha256 digest;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("read " + what, errno);
    }
    if (n == 0) break;
    digest.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
  }
  return digest.hex_digest();
}

}  // namespace o4s
