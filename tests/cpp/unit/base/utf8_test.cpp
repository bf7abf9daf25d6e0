#include "base/utf8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

namespace o4s::utf8 {
namespace {

// "é" is C3 A9, "€" E2 82 AC, "😀" F0 9F 98 80.
constexpr std::string_view kMixed = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";

TEST(Utf8Test, ContinuationBytesAreExactly10xxxxxx) {
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(is_continuation(static_cast<char>(b)), b >= 0x80 && b <= 0xBF) << b;
  }
}

TEST(Utf8Test, LengthCountsCodePointsAsPythonsLen) {
  EXPECT_EQ(length(""), 0u);
  EXPECT_EQ(length("plain"), 5u);
  EXPECT_EQ(length(kMixed), 5u);  // a é € 😀 z
}

TEST(Utf8Test, LengthOfInvalidBytesNeverThrowsAndSkipsStrayContinuations) {
  EXPECT_EQ(length("\x80\x80"), 0u);
  EXPECT_EQ(length("a\xFF"), 2u);
}

TEST(Utf8Test, PrefixCutsOnACodePointBoundary) {
  EXPECT_EQ(prefix(kMixed, 0), "");
  EXPECT_EQ(prefix(kMixed, 1), "a");
  EXPECT_EQ(prefix(kMixed, 2), "a\xC3\xA9");
  EXPECT_EQ(prefix(kMixed, 4), "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(prefix(kMixed, 5), kMixed);
  EXPECT_EQ(prefix(kMixed, 99), kMixed);
}

TEST(Utf8Test, EveryPrefixIsWholeCodePointsOfTheText) {
  for (std::size_t n = 0; n <= 6; ++n) {
    std::string_view cut = prefix(kMixed, n);
    EXPECT_EQ(length(cut), std::min<std::size_t>(n, 5));
    EXPECT_TRUE(cut.size() == kMixed.size() || !is_continuation(kMixed[cut.size()]));
  }
}

TEST(Utf8Test, PrefixWithinBytesBacksOffToALeadByte) {
  EXPECT_EQ(prefix_within_bytes(kMixed, 0), "");
  EXPECT_EQ(prefix_within_bytes(kMixed, 2), "a");  // would split é
  EXPECT_EQ(prefix_within_bytes(kMixed, 3), "a\xC3\xA9");
  EXPECT_EQ(prefix_within_bytes(kMixed, 5), "a\xC3\xA9");  // would split €
  EXPECT_EQ(prefix_within_bytes(kMixed, kMixed.size()), kMixed);
  EXPECT_EQ(prefix_within_bytes(kMixed, 1000), kMixed);
}

TEST(Utf8Test, SuffixWithinBytesSkipsAPartialSequence) {
  EXPECT_EQ(suffix_within_bytes(kMixed, 0), "");
  EXPECT_EQ(suffix_within_bytes(kMixed, 1), "z");
  EXPECT_EQ(suffix_within_bytes(kMixed, 3), "z");  // would start inside 😀
  EXPECT_EQ(suffix_within_bytes(kMixed, 5), "\xF0\x9F\x98\x80z");
  EXPECT_EQ(suffix_within_bytes(kMixed, 1000), kMixed);
}

TEST(Utf8Test, CompletePrefixHoldsBackOnlyAnUnfinishedTail) {
  EXPECT_EQ(complete_prefix(""), 0u);
  EXPECT_EQ(complete_prefix("plain"), 5u);
  EXPECT_EQ(complete_prefix("ab\xE2\x82"), 2u);
  EXPECT_EQ(complete_prefix("ab\xE2\x82\xAC"), 5u);
  EXPECT_EQ(complete_prefix("\xF0\x9F\x98"), 0u);
  EXPECT_EQ(complete_prefix("ab\xC3"), 2u);
  // Not unfinished but invalid: left in, for replace_invalid to mark.
  EXPECT_EQ(complete_prefix("ab\xFF"), 3u);
  EXPECT_EQ(complete_prefix("ab\x80\x80\x80\x80"), 6u);
}

TEST(Utf8Test, ReplaceInvalidKeepsWellFormedText) {
  EXPECT_EQ(replace_invalid(kMixed), kMixed);
  EXPECT_EQ(replace_invalid(""), "");
}

TEST(Utf8Test, ReplaceInvalidMarksEachBadByte) {
  constexpr std::string_view kFffd = "\xEF\xBF\xBD";
  EXPECT_EQ(replace_invalid("ok\xFFok"), "ok" + std::string(kFffd) + "ok");
  // A surrogate (U+D800), an overlong "/" and a code point past U+10FFFF.
  for (std::string_view bad : {"\xED\xA0\x80", "\xE0\x80\xAF", "\xF4\x90\x80\x80"}) {
    std::string expected;
    for (std::size_t i = 0; i < bad.size(); ++i) expected += kFffd;
    EXPECT_EQ(replace_invalid(bad), expected);
  }
  EXPECT_EQ(replace_invalid("\xC0\xAF"), std::string(kFffd) + std::string(kFffd));
  // A sequence cut short at the end of the input.
  EXPECT_EQ(replace_invalid("a\xE2\x82"), "a" + std::string(kFffd) + std::string(kFffd));
}

}  // namespace
}  // namespace o4s::utf8
