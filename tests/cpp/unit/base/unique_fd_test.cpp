#include "base/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace o4s {
namespace {

bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

int open_null() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFdTest, DefaultIsInvalid) {
  UniqueFd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(static_cast<bool>(fd));
  EXPECT_EQ(fd.get(), -1);
}

TEST(UniqueFdTest, ClosesOnDestruction) {
  int raw = open_null();
  ASSERT_GE(raw, 0);
  { UniqueFd fd(raw); }
  EXPECT_FALSE(fd_open(raw));
}

TEST(UniqueFdTest, MoveTransfersOwnership) {
  int raw = open_null();
  UniqueFd a(raw);
  UniqueFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_EQ(b.get(), raw);
  EXPECT_TRUE(fd_open(raw));
}

TEST(UniqueFdTest, MoveAssignClosesThePreviousFd) {
  int first = open_null();
  int second = open_null();
  UniqueFd a(first);
  UniqueFd b(second);
  a = std::move(b);
  EXPECT_FALSE(fd_open(first));
  EXPECT_EQ(a.get(), second);
  EXPECT_TRUE(fd_open(second));
}

TEST(UniqueFdTest, ReleaseGivesUpOwnership) {
  int raw = open_null();
  {
    UniqueFd fd(raw);
    EXPECT_EQ(fd.release(), raw);
    EXPECT_FALSE(fd.valid());
  }
  EXPECT_TRUE(fd_open(raw));
  ::close(raw);
}

TEST(UniqueFdTest, ResetClosesAndAdopts) {
  int first = open_null();
  int second = open_null();
  UniqueFd fd(first);
  fd.reset(second);
  EXPECT_FALSE(fd_open(first));
  EXPECT_EQ(fd.get(), second);
  fd.reset();
  EXPECT_FALSE(fd_open(second));
  EXPECT_FALSE(fd.valid());
}

}  // namespace
}  // namespace o4s
