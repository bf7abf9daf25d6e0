#include "proto/frame_codec.h"

#include <gtest/gtest.h>

#include <string>

#include "proto/limits.h"

namespace o4s::proto {
namespace {

TEST(EncodeFrameTest, IsOneLineTerminatedByNewline) {
  std::string line = encode_frame(Json{{"type", "execute"}, {"code", "a\nb"}});
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  // The embedded newline is escaped, so the frame stays one line.
  EXPECT_EQ(line.find('\n'), line.size() - 1);
}

TEST(EncodeFrameTest, EmitsNonAsciiRaw) {
  // Spec §3.1: writers do not \u-escape non-ASCII.
  std::string line = encode_frame(Json{{"text", "h\xC3\xA9llo \xF0\x9F\x99\x82"}});
  EXPECT_NE(line.find("h\xC3\xA9llo \xF0\x9F\x99\x82"), std::string::npos) << line;
  EXPECT_EQ(line.find("\\u"), std::string::npos) << line;
}

TEST(EncodeFrameTest, ReplacesInvalidUtf8InsteadOfThrowing) {
  Json frame{{"text", std::string("ok\xFF\xFEok")}};
  std::string line;
  ASSERT_NO_THROW(line = encode_frame(frame));
  auto decoded = decode_frame(line);
  ASSERT_TRUE(decoded.ok()) << line;
  // Each invalid byte becomes U+FFFD; the valid text around it survives.
  EXPECT_EQ(decoded.value()["text"], "ok\xEF\xBF\xBD\xEF\xBF\xBDok");
}

Json nested(int levels) {
  Json inner = Json::array();
  for (int i = 1; i < levels; ++i) inner = Json::array({inner});
  return inner;
}

TEST(EncodeFrameTest, AFrameDeeperThanTheWireCarriesIsReplacedByItsError) {
  // The reply object is one level, so data of kMaxFrameDepth - 1 fits.
  Json fits{{"type", "host_response"}, {"id", "hc-1"}, {"data", nested(kMaxFrameDepth - 1)}};
  auto decoded = decode_frame(encode_frame(fits));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded.value(), fits);

  Json deep{{"type", "host_response"}, {"id", "hc-2"}, {"data", nested(kMaxFrameDepth)}};
  auto replaced = decode_frame(encode_frame(deep));
  ASSERT_TRUE(replaced.ok()) << "the host wrote a line its own reader refuses";
  EXPECT_EQ(replaced.value()["type"], "host_response");
  EXPECT_EQ(replaced.value()["id"], "hc-2");
  EXPECT_NE(replaced.value()["error"].get<std::string>().find("nested deeper than 256"),
            std::string::npos);
  EXPECT_FALSE(replaced.value().contains("data"));
}

TEST(EncodeFrameTest, RoundTripsThroughDecode) {
  Json frame{{"type", "host_response"}, {"id", "hc-1-2"}, {"data", {{"a", {1, 2, nullptr}}}}};
  auto decoded = decode_frame(encode_frame(frame));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded.value(), frame);
}

TEST(DecodeFrameTest, WhitespaceOnlyLineIsTheEmptyFrame) {
  for (const char* line : {"", "\n", "   \n", "\t \r\n"}) {
    auto decoded = decode_frame(line);
    ASSERT_TRUE(decoded.ok()) << '"' << line << '"';
    EXPECT_EQ(decoded.value(), Json::object());
  }
}

TEST(DecodeFrameTest, AcceptsTheTrailingNewline) {
  auto decoded = decode_frame("{\"type\":\"log\",\"msg\":\"x\"}\n");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(frame_type(decoded.value()), "log");
}

TEST(DecodeFrameTest, GarbageIsAProtocolError) {
  for (const char* line :
       {"not json\n", "{\"type\":", "{\"a\":1} {\"b\":2}\n", "Traceback (most recent call last):\n",
        "\xFF\xFE\n", "{\"text\":\"\xFF\"}\n"}) {
    auto decoded = decode_frame(line);
    ASSERT_FALSE(decoded.ok()) << line;
    EXPECT_EQ(decoded.error().code, ErrorCode::kProtocol);
    EXPECT_EQ(decoded.error().message, "malformed frame: not JSON");
  }
}

TEST(DecodeFrameTest, DeepNestingIsRefusedBeforeAnythingRecursesOnIt) {
  // A hostile cell can write onto the protocol pipe; every consumer of a
  // frame (the Python conversion, dump()) recurses per level, so one line
  // of brackets must be a counted protocol error, not a host crash.
  constexpr std::size_t kDepth = 200'000;
  std::string line(kDepth, '[');
  line.append(kDepth, ']');
  auto decoded = decode_frame(line);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(decoded.error().message, "malformed frame: nested too deep");
}

TEST(DecodeFrameTest, ModerateNestingAndBracketsInsideStringsDecode) {
  std::string line(200, '[');
  line.append(200, ']');
  EXPECT_TRUE(decode_frame(line).ok());
  std::string text = "{\"msg\":\"" + std::string(1000, '[') + "\\\"\"}";
  auto decoded = decode_frame(text);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded.value()["msg"].get<std::string>().size(), 1001U);
}

TEST(DecodeFrameTest, NonObjectValuesDecode) {
  // The manager ignores them; the codec does not reject valid JSON.
  auto decoded = decode_frame("[1,2]\n");
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded.value().is_array());
}

TEST(FrameAccessorsTest, NeverThrowOnTheWrongShape) {
  EXPECT_EQ(frame_type(Json::array()), "");
  EXPECT_EQ(frame_type(Json(5)), "");
  EXPECT_EQ(frame_type(Json::object()), "");
  EXPECT_EQ(frame_type(Json{{"type", 3}}), "");
  EXPECT_EQ(frame_type(Json{{"type", "response"}}), "response");

  EXPECT_EQ(frame_string(Json(nullptr), "id"), "");
  EXPECT_EQ(frame_string(Json{{"id", nullptr}}, "id"), "");
  EXPECT_EQ(frame_string(Json{{"id", 12}}, "id"), "");
  EXPECT_EQ(frame_string(Json{{"id", "abc"}}, "id"), "abc");
}

}  // namespace
}  // namespace o4s::proto
