#include "base/random_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace o4s {

void fill_random(unsigned char* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(out + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      std::abort();  // no entropy source: ids and keys would be guessable
    }
    got += static_cast<std::size_t>(r);
  }
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

std::string random_hex(std::size_t n) {
  std::vector<unsigned char> bytes(n);
  fill_random(bytes.data(), n);
  std::string out;
  out.reserve(2 * n);
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

std::string uuid4() {
  unsigned char b[16];
  fill_random(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[b[i] >> 4]);
    out.push_back(kHex[b[i] & 0xF]);
  }
  return out;
}

}  // namespace o4s
