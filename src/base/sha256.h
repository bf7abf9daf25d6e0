// SHA-256 digests (OpenSSL libcrypto), hex encoded.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace o4s {

std::string sha256_hex(std::string_view data);

// Streaming digest for files and large inputs.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  std::string hex_digest();  // finalises; call once

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Hashes what is left to read of an open fd (borrowed), in 1 MiB chunks.
Result<std::string> sha256_fd(int fd, const std::string& what);

}  // namespace o4s
