#pragma once

#include <cstddef>
#include <string>

namespace o4s {

// A random (version 4) UUID in its canonical lowercase text form.
std::string uuid4();
// Fills out[0..n) from getrandom; aborts when there is no entropy source
// (ids, keys and tokens would be guessable).
void fill_random(unsigned char* out, std::size_t n);
// n cryptographically random bytes, lowercase hex (2n chars), from getrandom.
std::string random_hex(std::size_t n);

}  // namespace o4s
