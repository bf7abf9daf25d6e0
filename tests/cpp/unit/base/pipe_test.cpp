#include "base/pipe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

#include "base/scope_exit.h"

namespace o4s {
namespace {

bool close_on_exec(int fd) { return (::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0; }
bool non_blocking(int fd) { return (::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0; }

TEST(MakePipeTest, BothEndsCloseOnExecAndBlockByDefault) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok()) << pipe.error().message;
  ASSERT_TRUE(pipe->read && pipe->write);
  EXPECT_TRUE(close_on_exec(pipe->read.get()));
  EXPECT_TRUE(close_on_exec(pipe->write.get()));
  EXPECT_FALSE(non_blocking(pipe->read.get()));
  EXPECT_FALSE(non_blocking(pipe->write.get()));
}

TEST(MakePipeTest, WhatTheWriteEndTakesTheReadEndGives) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  ASSERT_EQ(::write(pipe->write.get(), "ping", 4), 4);
  char buffer[8] = {};
  ASSERT_EQ(::read(pipe->read.get(), buffer, sizeof buffer), 4);
  EXPECT_STREQ(buffer, "ping");
}

TEST(MakePipeTest, ExtraFlagsAddToCloseOnExec) {
  auto pipe = make_pipe(O_NONBLOCK);
  ASSERT_TRUE(pipe.ok());
  EXPECT_TRUE(close_on_exec(pipe->read.get()));
  EXPECT_TRUE(non_blocking(pipe->read.get()));
  EXPECT_TRUE(non_blocking(pipe->write.get()));
  char byte = 0;
  errno = 0;
  EXPECT_EQ(::read(pipe->read.get(), &byte, 1), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST(MakePipeTest, NoDescriptorsLeftIsASystemErrorWithItsErrno) {
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit none = saved;
  none.rlim_cur = 0;  // no new descriptor at all, whatever is free below
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &none), 0);
  ScopeExit restore([&] { ::setrlimit(RLIMIT_NOFILE, &saved); });
  auto pipe = make_pipe();
  ASSERT_FALSE(pipe.ok());
  EXPECT_EQ(pipe.error().code, ErrorCode::kSystem);
  EXPECT_EQ(pipe.error().sys_errno, EMFILE);
  EXPECT_EQ(pipe.error().message, "pipe2: EMFILE");
}

}  // namespace
}  // namespace o4s
