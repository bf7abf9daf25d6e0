// The fast (simdjson) decoder must give exactly the reference's answer or
// decline: a frame means the same thing whichever parser read it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "proto/frame_codec.h"
#include "proto/json_decoders.h"
#include "proto/limits.h"

namespace o4s::proto {
namespace {

// nlohmann's operator== equates 1 (unsigned) with 1 (signed) and 1.0; the
// fast path must also match the stored type.
bool same(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !same(*it, *other)) return false;
    }
    return true;
  }
  if (a.is_number_float()) {
    double x = a.get<double>();
    double y = b.get<double>();
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  return a == b;
}

// Fails the test if the fast path answers differently from the reference.
// Returns whether the fast path answered at all.
bool agrees(const std::string& text) {
  auto fast = detail::decode_fast(text);
  auto reference = detail::decode_reference(text);
  if (!fast) return false;
  EXPECT_TRUE(reference.ok()) << "fast accepted what the reference refuses: "
                              << text.substr(0, 200);
  if (reference.ok()) {
    EXPECT_TRUE(same(*fast, reference.value()))
        << "values differ for " << text.substr(0, 200) << "\nfast: " << fast->dump()
        << "\nreference: " << reference.value().dump();
  }
  return true;
}

std::string nested(int depth, char open, char close, const std::string& leaf) {
  std::string text;
  for (int i = 0; i < depth; ++i)
    text += open == '{' ? std::string("{\"k\":") : std::string(1, open);
  text += leaf;
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

TEST(FastDecodeTest, TakesOrdinaryFrames) {
  EXPECT_TRUE(agrees(R"({"type":"stdout_chunk","id":"c-1","text":"hello\n"})"));
  EXPECT_TRUE(agrees("{\"type\":\"response\",\"stdout\":\"h\xC3\xA9llo \xF0\x9F\x99\x82\"}\n"));
  EXPECT_TRUE(agrees(R"({"a":[1,-2,3.5,true,false,null,"x",{"b":[]}],"c":{}})"));
}

TEST(FastDecodeTest, NumbersKeepTheReferenceTypes) {
  for (const char* text : {"0",
                           "-0",
                           "1",
                           "-1",
                           "9223372036854775807",
                           "9223372036854775808",
                           "-9223372036854775808",
                           "18446744073709551615",
                           "18446744073709551616",
                           "-9223372036854775809",
                           "123456789012345678901234567890",
                           "1.0",
                           "-0.0",
                           "1e2",
                           "1E-2",
                           "1e400",
                           "-1e400",
                           "5e-324",
                           "2.2250738585072014e-308",
                           "0.1000000000000000055511151231257827",
                           "1.7976931348623157e308",
                           R"({"n":[0,1,-1,2.5e10]})"}) {
    agrees(text);
  }
  // The common integers are the fast path's to take.
  EXPECT_TRUE(agrees("[0,1,-1,9223372036854775807,18446744073709551615]"));
}

TEST(FastDecodeTest, StringsAndEscapes) {
  for (const char* text :
       {R"("\u0000")", R"("\ud83d\ude42")", R"("\ud800")", R"("\udc00")", R"("\ud800x")",
        R"("a\"b\\c\/d\b\f\n\r\t")", R"("\u00e9")", R"("\x41")", R"("\u12")", "\"tab\there\"",
        "\"\xEF\xBB\xBF\"", "\xEF\xBB\xBF{}", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"",
        "\"\xF4\x90\x80\x80\"", R"({"k":1,"k":2})", R"({"\u006b":1,"k":2})"}) {
    agrees(text);
  }
}

TEST(FastDecodeTest, NestingAtTheBound) {
  for (int depth : {kMaxFrameDepth - 1, kMaxFrameDepth, kMaxFrameDepth + 1, kMaxFrameDepth + 50}) {
    for (char open : {'[', '{'}) {
      std::string text = nested(depth, open, open == '[' ? ']' : '}', "1");
      agrees(text);
      // Whoever decides, the public answer is the reference's.
      auto decoded = decode_frame(text);
      auto reference = detail::decode_reference(text);
      EXPECT_EQ(decoded.ok(), reference.ok()) << depth << open;
    }
  }
  EXPECT_FALSE(decode_frame(nested(kMaxFrameDepth + 1, '[', ']', "1")).ok());
  EXPECT_TRUE(decode_frame(nested(kMaxFrameDepth, '[', ']', "1")).ok());
}

TEST(FastDecodeTest, RefusesWhatIsNotOneJsonValue) {
  for (const char* text : {"", "not json", "{\"a\":1} {\"b\":2}", "{\"type\":", "[1,]", "{,}",
                           "NaN", "Infinity", "'x'", "[01]", "1.", ".5", "+1", "\"\xFF\""}) {
    agrees(text);
  }
}

TEST(FastDecodeTest, ALargeFrameParsesAndAgrees) {
  Json frame{{"type", "response"}, {"id", "c"}, {"stdout", std::string(3'000'000, 'x')}};
  EXPECT_TRUE(agrees(encode_frame(frame)));
  // And the thread's kept parser still serves small frames afterwards.
  EXPECT_TRUE(agrees(R"({"type":"log","msg":"after"})"));
}

Json random_value(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 4 ? 5 : 7);
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng()) >> (rng() % 64);
    case 3:
      return static_cast<std::uint64_t>(rng());
    case 4:
      return std::ldexp(static_cast<double>(rng() % 1000000) - 500000.0,
                        static_cast<int>(rng() % 200) - 100);
    case 5: {
      static const std::vector<std::string> pieces{
          "a", "\n", "\"", "\\", "\xC3\xA9", "\xF0\x9F\x99\x82", std::string(1, '\0'), "\x01", " "};
      std::string text;
      for (int i = static_cast<int>(rng() % 8); i > 0; --i) text += pieces[rng() % pieces.size()];
      return text;
    }
    case 6: {
      Json array = Json::array();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i)
        array.push_back(random_value(rng, depth + 1));
      return array;
    }
    default: {
      Json object = Json::object();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i) {
        object["k" + std::to_string(rng() % 6)] = random_value(rng, depth + 1);
      }
      return object;
    }
  }
}

TEST(FastDecodeTest, RandomFramesAgree) {
  std::mt19937_64 rng(20261129);
  int taken = 0;
  for (int i = 0; i < 3000; ++i) {
    Json value = random_value(rng, 0);
    std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (agrees(text)) ++taken;
  }
  // Valid, shallow JSON is what the fast path exists for.
  EXPECT_EQ(taken, 3000);
}

TEST(FastDecodeTest, MutatedFramesNeverDisagree) {
  std::mt19937_64 rng(42);
  static const std::string alphabet = "{}[]\":,\\u0123456789eE+-.tfnrl \xFF\xC3\xA9\xED\xA0\x80";
  for (int i = 0; i < 20000; ++i) {
    std::string text = random_value(rng, 0).dump(-1, ' ', false, Json::error_handler_t::replace);
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0 && !text.empty(); --edits) {
      std::size_t at = rng() % text.size();
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          text.erase(at, 1);
      }
    }
    agrees(text);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace o4s::proto
