// Standard padded base64 both ways, and what it refuses.
#include "mcp/base64.h"

#include <gtest/gtest.h>

namespace o4s::mcp {
namespace {

TEST(Base64, MatchesRfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    auto decoded = base64_decode(encoded);
    ASSERT_TRUE(decoded.has_value()) << encoded;
    EXPECT_EQ(*decoded, plain);
    EXPECT_EQ(base64_decoded_size(encoded), std::string(plain).size());
  }
}

TEST(Base64, RoundTripsEveryByte) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes);
}

TEST(Base64, RefusesWhatIsNotPaddedStandardBase64) {
  for (const char* text :
       {"Zg", "Zg=", "Z===", "Zm9v\n", " Zm9v", "Zm-v", "Zm_v", "@@@@", "Zg==Zg==", "=Zg="}) {
    EXPECT_FALSE(base64_decode(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace o4s::mcp
