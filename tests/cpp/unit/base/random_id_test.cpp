#include "base/random_id.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

namespace o4s {
namespace {

TEST(Uuid4Test, HasTheCanonicalVersion4Form) {
  // Lowercase, 8-4-4-4-12, version nibble 4, RFC 4122 variant (8, 9, a, b).
  const std::regex form("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  for (int i = 0; i < 1000; ++i) {
    std::string id = uuid4();
    ASSERT_TRUE(std::regex_match(id, form)) << id;
  }
}

TEST(Uuid4Test, IsUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(uuid4());
  EXPECT_EQ(seen.size(), 10000U);
}

TEST(Uuid4Test, VariantNibbleTakesAllFourValues) {
  // Guards against a variant mask that pins the nibble to one value.
  std::set<char> variants;
  for (int i = 0; i < 400; ++i) variants.insert(uuid4()[19]);
  EXPECT_EQ(variants, (std::set<char>{'8', '9', 'a', 'b'}));
}

TEST(RandomHexTest, IsTwoLowercaseHexCharsPerByte) {
  const std::regex form("^[0-9a-f]*$");
  for (std::size_t n : {0U, 1U, 16U, 32U, 100U}) {
    std::string hex = random_hex(n);
    EXPECT_EQ(hex.size(), 2 * n);
    EXPECT_TRUE(std::regex_match(hex, form)) << hex;
  }
}

TEST(RandomHexTest, IsUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(random_hex(32));
  EXPECT_EQ(seen.size(), 10000U);
}

TEST(RandomHexTest, EveryPositionUsesTheWholeAlphabet) {
  // A key generator that leaves a nibble constant (a shift or mask bug) would
  // cut the key space; 2000 samples make a missing digit vanishingly unlikely
  // for a uniform source (16 * (15/16)^2000 per position).
  std::vector<std::set<char>> digits(64);
  for (int i = 0; i < 2000; ++i) {
    std::string hex = random_hex(32);
    for (std::size_t p = 0; p < hex.size(); ++p) digits[p].insert(hex[p]);
  }
  for (std::size_t p = 0; p < digits.size(); ++p) {
    EXPECT_EQ(digits[p].size(), 16U) << "position " << p;
  }
}

}  // namespace
}  // namespace o4s
