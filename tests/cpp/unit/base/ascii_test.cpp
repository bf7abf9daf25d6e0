#include "base/ascii.h"

#include <gtest/gtest.h>

#include <cctype>
#include <clocale>
#include <string>

namespace o4s::ascii {
namespace {

// In the "C" locale <cctype> is the ASCII classification: the helpers must
// agree with it on every byte, and classify no byte past 0x7F.
TEST(AsciiTest, AgreesWithTheCLocaleOnEveryByte) {
  ASSERT_STREQ(std::setlocale(LC_CTYPE, nullptr), "C");
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    EXPECT_EQ(is_digit(c), std::isdigit(b) != 0) << b;
    EXPECT_EQ(is_lower(c), std::islower(b) != 0) << b;
    EXPECT_EQ(is_upper(c), std::isupper(b) != 0) << b;
    EXPECT_EQ(is_alpha(c), std::isalpha(b) != 0) << b;
    EXPECT_EQ(is_alnum(c), std::isalnum(b) != 0) << b;
    EXPECT_EQ(is_space(c), std::isspace(b) != 0) << b;
    EXPECT_EQ(to_lower(c), static_cast<char>(std::tolower(b))) << b;
    EXPECT_EQ(to_upper(c), static_cast<char>(std::toupper(b))) << b;
  }
}

TEST(AsciiTest, HighBytesAreInNoClassAndKeepTheirCase) {
  for (int b = 0x80; b < 256; ++b) {
    const char c = static_cast<char>(b);
    EXPECT_FALSE(is_alnum(c) || is_space(c)) << b;
    EXPECT_EQ(to_lower(c), c);
    EXPECT_EQ(to_upper(c), c);
  }
}

TEST(AsciiTest, LoweredAndUpperedMapOnlyAsciiLetters) {
  EXPECT_EQ(lowered("MiXeD 42_\xC3\x89"), "mixed 42_\xC3\x89");
  EXPECT_EQ(uppered("MiXeD 42_\xC3\xA9"), "MIXED 42_\xC3\xA9");
  EXPECT_EQ(lowered(""), "");
}

TEST(AsciiTest, MatchesLowerAtIgnoresCaseAndStaysInBounds) {
  EXPECT_TRUE(matches_lower_at("Authorization: BEARER x", 15, "bearer"));
  EXPECT_TRUE(matches_lower_at("MKFS.ext4", 0, "mkfs"));
  EXPECT_FALSE(matches_lower_at("mkf", 0, "mkfs"));
  EXPECT_FALSE(matches_lower_at("xmkfs", 0, "mkfs"));
  EXPECT_TRUE(matches_lower_at("abc", 3, ""));
  EXPECT_FALSE(matches_lower_at("abc", 3, "c"));
  EXPECT_FALSE(matches_lower_at("abc", 4, ""));
}

}  // namespace
}  // namespace o4s::ascii
