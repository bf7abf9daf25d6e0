#include "base/result.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>

#include "base/scope_exit.h"

namespace o4s {
namespace {

TEST(ResultTest, HoldsAValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
}

TEST(ResultTest, HoldsAnError) {
  Result<int> r = make_error(ErrorCode::kBusy, "kernel worker is busy");
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error().code, ErrorCode::kBusy);
  EXPECT_EQ(r.error().message, "kernel worker is busy");
  EXPECT_EQ(r.error().sys_errno, 0);
  EXPECT_EQ(r.error().cause, nullptr);
}

TEST(ResultTest, MovesAMoveOnlyValueOut) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> taken = std::move(r).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 7);
}

TEST(ResultTest, ArrowReachesTheValue) {
  Result<std::string> r = std::string("abc");
  EXPECT_EQ(r->size(), 3U);
}

TEST(ResultTest, MovesTheErrorOut) {
  Result<std::string> r = make_error(ErrorCode::kProtocol, "desync");
  Error e = std::move(r).error();
  EXPECT_EQ(e.code, ErrorCode::kProtocol);
  EXPECT_EQ(e.message, "desync");
}

TEST(StatusTest, DefaultIsSuccess) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(static_cast<bool>(s));
}

TEST(StatusTest, CarriesAnErrorAndItsCause) {
  struct Cause : ErrorCause {};
  Error error = make_error(ErrorCode::kCancelled, "callback raised");
  auto cause = std::make_shared<Cause>();
  error.cause = cause;
  Status s = error;
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(s.error().cause, cause);
}

TEST(StatusTest, MoveKeepsTheError) {
  Status a = make_error(ErrorCode::kTimeout, "late");
  Status b = std::move(a);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "late");
}

TEST(SystemErrorTest, NamesTheErrnoSymbolically) {
  Error e = system_error("open: /proc/42/fd", EACCES);
  EXPECT_EQ(e.code, ErrorCode::kSystem);
  EXPECT_EQ(e.sys_errno, EACCES);
  EXPECT_EQ(e.message, "open: /proc/42/fd: EACCES");
}

TEST(SystemErrorTest, DistinctErrnosGiveDistinctNames) {
  EXPECT_EQ(system_error("x", ENOENT).message, "x: ENOENT");
  EXPECT_EQ(system_error("x", EPIPE).message, "x: EPIPE");
}

TEST(SystemErrorTest, UnknownErrnoStillProducesText) {
  // strerrorname_np has no name for this; the description is the fallback.
  Error e = system_error("x", 4095);
  EXPECT_EQ(e.sys_errno, 4095);
  EXPECT_GT(e.message.size(), std::string("x: ").size());
  EXPECT_EQ(e.message.rfind("x: ", 0), 0U);
}

TEST(ScopeExitTest, RunsAtScopeEnd) {
  int runs = 0;
  {
    ScopeExit guard([&] { ++runs; });
    EXPECT_EQ(runs, 0);
  }
  EXPECT_EQ(runs, 1);
}

TEST(ScopeExitTest, ReleasedGuardDoesNotRun) {
  int runs = 0;
  {
    ScopeExit guard([&] { ++runs; });
    guard.release();
  }
  EXPECT_EQ(runs, 0);
}

}  // namespace
}  // namespace o4s
