// The signature check in front of xeus: exactly the hex HMAC of the four
// signed parts, nothing before it in the frame and nothing after.
#include "jupyter/message_signature.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace o4s::jupyter {
namespace {

// hmac.new(b"secret", b'{"h":1}{}{}{"code":"1"}', hashlib.sha256).hexdigest()
const std::string kSha256 = "615aebe09b49b2473ff0e2188c1c9f26d4af47915ec60616c8c4ae238ee10237";

std::vector<std::string> message(const std::string& signature) {
  return {"identity", "<IDS|MSG>", signature, R"({"h":1})", "{}", "{}", R"({"code":"1"})"};
}

bool accepted(const SignatureCheck& check, const std::vector<std::string>& frames) {
  std::vector<std::string_view> views(frames.begin(), frames.end());
  return check.accepts(views);
}

TEST(MessageSignatureTest, TheExactSignatureIsAccepted) {
  SignatureCheck check("hmac-sha256", "secret");
  EXPECT_TRUE(accepted(check, message(kSha256)));
  auto with_buffer = message(kSha256);
  with_buffer.push_back("a binary buffer");  // buffers are not signed
  EXPECT_TRUE(accepted(check, with_buffer));
}

TEST(MessageSignatureTest, AnythingElseInTheSignatureFrameIsRefused) {
  SignatureCheck check("hmac-sha256", "secret");
  EXPECT_FALSE(accepted(check, message(kSha256 + "00")));
  EXPECT_FALSE(accepted(check, message(kSha256 + std::string(1, '\0'))));
  EXPECT_FALSE(accepted(check, message(kSha256.substr(0, 62))));
  EXPECT_FALSE(accepted(check, message("")));
  std::string upper = kSha256;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_FALSE(accepted(check, message(upper)));
  std::string flipped = kSha256;
  flipped.back() = flipped.back() == '7' ? '8' : '7';
  EXPECT_FALSE(accepted(check, message(flipped)));
}

TEST(MessageSignatureTest, TheSignedPartsAreWhatIsChecked) {
  SignatureCheck check("hmac-sha256", "secret");
  auto changed = message(kSha256);
  changed[6] = R"({"code":"2"})";
  EXPECT_FALSE(accepted(check, changed));
  EXPECT_FALSE(accepted(SignatureCheck("hmac-sha256", "other key"), message(kSha256)));
}

TEST(MessageSignatureTest, AMessageWithoutItsShapeIsRefused) {
  SignatureCheck check("hmac-sha256", "secret");
  auto no_delimiter = message(kSha256);
  no_delimiter[1] = "<IDS|MSG";
  EXPECT_FALSE(accepted(check, no_delimiter));
  auto short_message = message(kSha256);
  short_message.pop_back();
  EXPECT_FALSE(accepted(check, short_message));
  EXPECT_FALSE(accepted(check, {}));
}

TEST(MessageSignatureTest, OtherSchemesAndNoKey) {
  const std::string sha512 =
      "b216f2175c9f2d87ed1a3e050951a0bc670d7530f9195199aac31455ecf6fd9d8c68f9f983b49a08387b05bdac81"
      "0cd2d89ab179ef9b533345e82a2b833c70f9";
  EXPECT_TRUE(accepted(SignatureCheck("hmac-sha512", "secret"), message(sha512)));
  EXPECT_FALSE(accepted(SignatureCheck("hmac-sha512", "secret"), message(kSha256)));
  // A scheme OpenSSL does not know accepts nothing.
  EXPECT_FALSE(accepted(SignatureCheck("hmac-nonesuch", "secret"), message(kSha256)));
  EXPECT_FALSE(accepted(SignatureCheck("rot13", "secret"), message(kSha256)));
  // No key: Jupyter's convention for unsigned messages (the shape still counts).
  EXPECT_TRUE(accepted(SignatureCheck("hmac-sha256", ""), message("")));
  EXPECT_FALSE(accepted(SignatureCheck("hmac-sha256", ""), {"<IDS|MSG>", ""}));
}

}  // namespace
}  // namespace o4s::jupyter
