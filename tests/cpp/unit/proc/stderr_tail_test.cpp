#include "proc/stderr_tail.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace o4s::proc {
namespace {

// Bytes 0..n-1 of a stream whose every 7-byte window is distinct enough to
// show exactly which suffix was kept.
std::string pattern(std::size_t n, std::size_t offset = 0) {
  std::string out;
  for (std::size_t i = offset; i < offset + n; ++i) {
    out.push_back(static_cast<char>('a' + (i * 7 + i / 26) % 26));
  }
  return out;
}

TEST(StderrTailTest, StartsEmpty) {
  StderrTail tail(16);
  EXPECT_EQ(tail.text(), "");
  EXPECT_EQ(tail.seen_bytes(), 0U);
  EXPECT_EQ(tail.dropped_bytes(), 0U);
  EXPECT_EQ(tail.retained_bytes(), 0U);
  EXPECT_FALSE(tail.truncated());
  EXPECT_FALSE(tail.closed());
  EXPECT_EQ(tail.budget(), 16U);
}

TEST(StderrTailTest, KeepsEverythingWithinTheBudget) {
  StderrTail tail(16);
  tail.append("hello ");
  tail.append("world");
  EXPECT_EQ(tail.text(), "hello world");
  EXPECT_EQ(tail.seen_bytes(), 11U);
  EXPECT_EQ(tail.retained_bytes(), 11U);
  EXPECT_EQ(tail.dropped_bytes(), 0U);
  EXPECT_FALSE(tail.truncated());
}

TEST(StderrTailTest, FillingTheBudgetExactlyDropsNothing) {
  StderrTail tail(10);
  tail.append("12345");
  tail.append("67890");
  EXPECT_EQ(tail.text(), "1234567890");
  EXPECT_FALSE(tail.truncated());
}

TEST(StderrTailTest, KeepsTheLastBytesAcrossManyAppends) {
  StderrTail tail(100);
  std::string all = pattern(1000);
  for (std::size_t i = 0; i < all.size(); i += 37) tail.append(std::string_view(all).substr(i, 37));
  EXPECT_EQ(tail.text(), all.substr(900));
  EXPECT_EQ(tail.seen_bytes(), 1000U);
  EXPECT_EQ(tail.retained_bytes(), 100U);
  EXPECT_EQ(tail.dropped_bytes(), 900U);
  EXPECT_TRUE(tail.truncated());
}

TEST(StderrTailTest, SingleWriteBiggerThanTheBudget) {
  StderrTail tail(10);
  tail.append("abc");
  std::string big = pattern(25, 3);
  tail.append(big);
  EXPECT_EQ(tail.text(), big.substr(15));
  EXPECT_EQ(tail.seen_bytes(), 28U);
  EXPECT_EQ(tail.retained_bytes(), 10U);
  // The 3 earlier bytes plus the 15 leading bytes of the big write.
  EXPECT_EQ(tail.dropped_bytes(), 18U);
  EXPECT_EQ(tail.seen_bytes(), tail.retained_bytes() + tail.dropped_bytes());
}

TEST(StderrTailTest, SingleWriteOfExactlyTheBudgetReplacesTheRing) {
  StderrTail tail(4);
  tail.append("xy");
  tail.append("1234");
  EXPECT_EQ(tail.text(), "1234");
  EXPECT_EQ(tail.dropped_bytes(), 2U);
}

TEST(StderrTailTest, KeepsRawBytes) {
  // Decoding is the binding's job; the tail must not alter what it keeps.
  StderrTail tail(16);
  const std::string raw("a\0b\xFF\xFE", 5);
  tail.append(raw);
  EXPECT_EQ(tail.text(), raw);
}

TEST(StderrTailTest, MarkClosed) {
  StderrTail tail(8);
  tail.mark_closed();
  EXPECT_TRUE(tail.closed());
}

TEST(StderrTailTest, AccountingHoldsUnderConcurrentAppends) {
  StderrTail tail(1000);
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&tail] {
      for (int i = 0; i < 5000; ++i) tail.append("0123456789");
    });
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(tail.seen_bytes(), 200'000U);
  EXPECT_EQ(tail.retained_bytes(), 1000U);
  EXPECT_EQ(tail.dropped_bytes(), 199'000U);
  // Appends are whole, so the kept text is still a run of the 10-byte unit.
  std::string text = tail.text();
  for (std::size_t i = 0; i < text.size(); ++i) {
    ASSERT_EQ(text[i], static_cast<char>('0' + i % 10)) << i;
  }
}

}  // namespace
}  // namespace o4s::proc
