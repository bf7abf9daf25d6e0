#include "base/deadline.h"

#include <gtest/gtest.h>

#include <chrono>

namespace o4s {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const Clock::time_point kNow = Clock::time_point(std::chrono::hours(1));

TEST(DeadlineTest, CountsWholeMillisecondsLeft) {
  EXPECT_EQ(left_until(kNow + milliseconds(250), kNow), milliseconds(250));
  // A part of a millisecond is not a millisecond to wait.
  EXPECT_EQ(left_until(kNow + std::chrono::microseconds(1999), kNow), milliseconds(1));
}

TEST(DeadlineTest, APassedDeadlineLeavesNothingNeverANegativeWait) {
  EXPECT_EQ(left_until(kNow, kNow), milliseconds(0));
  EXPECT_EQ(left_until(kNow - milliseconds(500), kNow), milliseconds(0));
}

TEST(DeadlineTest, TheFloorIsTheLeastItAnswers) {
  EXPECT_EQ(left_until(kNow - milliseconds(500), kNow, milliseconds(1)), milliseconds(1));
  EXPECT_EQ(left_until(kNow, kNow, milliseconds(1)), milliseconds(1));
  EXPECT_EQ(left_until(kNow + milliseconds(40), kNow, milliseconds(1)), milliseconds(40));
}

TEST(DeadlineTest, WithoutANowItReadsTheSteadyClock) {
  EXPECT_EQ(left_until(Clock::now() - milliseconds(10)), milliseconds(0));
  const milliseconds left = left_until(Clock::now() + std::chrono::hours(1));
  EXPECT_GT(left, std::chrono::minutes(59));
  EXPECT_LE(left, std::chrono::hours(1));
}

}  // namespace
}  // namespace o4s
