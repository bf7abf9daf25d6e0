// The ZMTP 3 stream filter below libzmq (apps/jupyter_kernel/zmtp_filter.h),
// fed as libzmq's reads would be: whole, and split at every byte.
#include "zmtp_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace o4s::jupyter_app {
namespace {

const MessageBounds kBounds{1000, 1500, 4};

std::string greeting() {
  std::string g(64, '\0');
  g[0] = '\xff';
  g[9] = '\x7f';
  g[10] = '\x03';
  g.replace(12, 4, "NULL");
  return g;
}

std::string frame(const std::string& body, bool more, bool force_long = false) {
  std::string out;
  if (body.size() < 256 && !force_long) {
    out.push_back(static_cast<char>(more ? 0x01 : 0x00));
    out.push_back(static_cast<char>(body.size()));
  } else {
    out.push_back(static_cast<char>(more ? 0x03 : 0x02));
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((body.size() >> shift) & 0xFF));
    }
  }
  return out + body;
}

std::string command(const std::string& body) {
  return std::string{'\x04', static_cast<char>(body.size())} + body;
}

// Feeds `stream` in pieces of `step` bytes; the bytes libzmq would read.
std::string through(const std::string& stream, std::size_t step,
                    ZmtpFilter::Outcome* outcome = nullptr) {
  ZmtpFilter filter(kBounds);
  std::string out;
  for (std::size_t at = 0; at < stream.size(); at += step) {
    auto result = filter.feed(std::string_view(stream).substr(at, step), out);
    if (result == ZmtpFilter::Outcome::kDisconnect) {
      if (outcome != nullptr) *outcome = result;
      return out;
    }
  }
  if (outcome != nullptr) *outcome = ZmtpFilter::Outcome::kPass;
  return out;
}

TEST(ZmtpFilter, MessagesWithinTheBoundsPassUnchangedHoweverTheyAreRead) {
  std::string stream = greeting() + command("\x05READY") + frame("a", true) +
                       frame(std::string(300, 'b'), true, true) + frame("", false) +
                       frame(std::string(999, 'c'), false);
  for (std::size_t step : {1u, 2u, 7u, 64u, 4096u}) EXPECT_EQ(through(stream, step), stream);
}

TEST(ZmtpFilter, AMessageOverItsPartsIsCutAndItsRestSwallowed) {
  std::string head =
      greeting() + frame("1", true) + frame("2", true) + frame("3", true) + frame("4", true);
  std::string rest = frame("5", true) + frame(std::string(500, 'x'), true) + frame("6", false);
  std::string next = frame("after", false);
  for (std::size_t step : {1u, 3u, 4096u}) {
    // The fifth part becomes an empty last frame; the rest never reaches libzmq.
    EXPECT_EQ(through(head + rest + next, step), head + frame("", false) + next);
  }
}

TEST(ZmtpFilter, AMessageOverItsBytesOrAFrameOverItsBoundIsCut) {
  std::string ok = greeting() + frame(std::string(800, 'a'), true);
  std::string over = frame(std::string(800, 'b'), true, true) + frame("end", false);
  EXPECT_EQ(through(ok + over, 5), ok + frame("", false));
  std::string big = greeting() + frame(std::string(1001, 'z'), false);
  EXPECT_EQ(through(big + frame("next", false), 11),
            greeting() + frame("", false) + frame("next", false));
}

TEST(ZmtpFilter, APassedBodyIsCountedWithoutBeingFed) {
  ZmtpFilter filter(kBounds);
  std::string out;
  std::string start = greeting() + frame(std::string(600, 'p'), false).substr(0, 9 + 100);
  ASSERT_EQ(filter.feed(start, out), ZmtpFilter::Outcome::kPass);
  EXPECT_EQ(filter.passing_body(), 500u);
  filter.passed(500);
  EXPECT_EQ(filter.passing_body(), 0u);
  out.clear();
  ASSERT_EQ(filter.feed(frame("next", false), out), ZmtpFilter::Outcome::kPass);
  EXPECT_EQ(out, frame("next", false));
}

TEST(ZmtpFilter, UnfinishedMessagesOfAllConnectionsShareOneBudget) {
  InFlightBudget budget(1200);
  MessageBounds bounds = kBounds;
  bounds.in_flight = &budget;
  std::string out_a, out_b;
  // A holds 900 bytes of a message it never ends; B's 400-byte frame would
  // pass B's own bounds but not the budget: cut.
  ZmtpFilter a(bounds), b(bounds);
  const std::string held = greeting() + frame(std::string(900, 'a'), true);
  ASSERT_EQ(a.feed(held, out_a), ZmtpFilter::Outcome::kPass);
  EXPECT_EQ(out_a, held);
  EXPECT_EQ(budget.used(), 900u);
  ASSERT_EQ(b.feed(greeting() + frame(std::string(400, 'b'), false), out_b),
            ZmtpFilter::Outcome::kPass);
  EXPECT_EQ(out_b, greeting() + frame("", false));
  // A's peer goes away: its share comes back, and B's next message passes
  // and, being whole, holds nothing afterwards.
  a.release();
  EXPECT_EQ(budget.used(), 0u);
  out_b.clear();
  ASSERT_EQ(b.feed(frame(std::string(400, 'c'), false), out_b), ZmtpFilter::Outcome::kPass);
  EXPECT_EQ(out_b, frame(std::string(400, 'c'), false));
  EXPECT_EQ(budget.used(), 0u);
  {
    ZmtpFilter c(bounds);
    std::string out_c;
    ASSERT_EQ(c.feed(greeting() + frame(std::string(700, 'd'), true), out_c),
              ZmtpFilter::Outcome::kPass);
    EXPECT_EQ(budget.used(), 700u);
  }
  EXPECT_EQ(budget.used(), 0u);  // a dropped connection's filter gives its share back
}

TEST(ZmtpFilter, APeerThatDoesNotSpeakZmtp3OrSendsAHugeCommandIsDisconnected) {
  ZmtpFilter::Outcome outcome{};
  std::string v2 = greeting();
  v2[10] = '\x01';
  through(v2, 1, &outcome);
  EXPECT_EQ(outcome, ZmtpFilter::Outcome::kDisconnect);
  through(std::string("\x05garbage"), 1, &outcome);
  EXPECT_EQ(outcome, ZmtpFilter::Outcome::kDisconnect);
  // A command frame announcing 4096 bytes (the bound here is 1000).
  std::string huge = greeting() + std::string("\x06\0\0\0\0\0\0\x10\0", 9);
  through(huge, 4096, &outcome);
  EXPECT_EQ(outcome, ZmtpFilter::Outcome::kDisconnect);
}

}  // namespace
}  // namespace o4s::jupyter_app
