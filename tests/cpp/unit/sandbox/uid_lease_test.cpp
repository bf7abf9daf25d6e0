#include "sandbox/uid_lease.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "support/temp_dir.h"

namespace o4s::sandbox {
namespace {

using o4s::testing::TempDir;

// Uids far from any account on a test machine.
constexpr UidRange kRange{0x4F3F0000U, 0x4F3F0003U};

std::string run_dir(const TempDir& dir) { return dir.file("run/uids"); }

// A process that runs as `uid` until killed (what a sandbox left behind).
pid_t process_as(std::uint32_t uid) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setresgid(uid, uid, uid) == 0 && ::setresuid(uid, uid, uid) == 0) ::pause();
    ::_exit(1);
  }
  return pid;
}

void end(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST(UidLeaseTest, TwoLeasesNeverShareAUidAndAReleasedOneIsHandedOutAgain) {
  TempDir dir;
  std::set<std::uint32_t> seen;
  std::vector<UidLease> held;
  for (int i = 0; i < 4; ++i) {
    auto lease = UidLease::acquire(run_dir(dir), kRange);
    ASSERT_TRUE(lease.ok()) << lease.error().message;
    EXPECT_TRUE(seen.insert(lease->uid()).second) << lease->uid();
    EXPECT_EQ(lease->gid(), lease->uid());
    held.push_back(std::move(lease.value()));
  }
  // Every uid of the range is held (the locks are per open file, so a
  // second daemon would be refused the same way).
  auto none = UidLease::acquire(run_dir(dir), kRange);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no sandbox uid is free"), std::string::npos);
  const std::uint32_t second = held[1].uid();
  held.erase(held.begin() + 1);
  auto again = UidLease::acquire(run_dir(dir), kRange);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->uid(), second);
  // The run directory is root's alone.
  struct stat st {};
  ASSERT_EQ(::stat(run_dir(dir).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(UidLeaseTest, APreferredUidComesFirstWhenFree) {
  TempDir dir;
  auto lease = UidLease::acquire(run_dir(dir), kRange, {kRange.first + 2, 12345});
  ASSERT_TRUE(lease.ok()) << lease.error().message;
  EXPECT_EQ(lease->uid(), kRange.first + 2);
  // Out of the range, a preference is ignored.
  auto other = UidLease::acquire(run_dir(dir), kRange, {12345});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->uid(), kRange.first);
}

TEST(UidLeaseTest, AUidADeadDaemonLeftIsReclaimedOnlyOnceNothingRunsAsIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "running a process as another uid needs root";
  TempDir dir;
  const UidRange one{kRange.first, kRange.first};
  // A daemon that died holding the uid: its lock is gone, its mark is not,
  // and a process of its sandbox still runs.
  {
    auto first = UidLease::acquire(run_dir(dir), one);
    ASSERT_TRUE(first.ok());
  }
  std::ofstream(run_dir(dir) + "/" + std::to_string(one.first)) << "999999\n";
  pid_t straggler = process_as(one.first);
  for (int i = 0; i < 200 && !uid_in_use(one.first).value_or(false); ++i) ::usleep(5000);
  ASSERT_TRUE(uid_in_use(one.first).value_or(false));
  auto refused = UidLease::acquire(run_dir(dir), one);
  EXPECT_FALSE(refused.ok()) << "handed out a uid while a process ran as it";
  end(straggler);
  EXPECT_FALSE(uid_in_use(one.first).value_or(true));
  auto reclaimed = UidLease::acquire(run_dir(dir), one);
  ASSERT_TRUE(reclaimed.ok()) << reclaimed.error().message;
  EXPECT_EQ(reclaimed->uid(), one.first);
}

TEST(UidLeaseTest, AZombieOfTheUidDoesNotHoldItBack) {
  if (::geteuid() != 0) GTEST_SKIP() << "running a process as another uid needs root";
  TempDir dir;
  const UidRange one{kRange.first, kRange.first};
  {
    auto first = UidLease::acquire(run_dir(dir), one);
    ASSERT_TRUE(first.ok());
  }
  std::ofstream(run_dir(dir) + "/" + std::to_string(one.first)) << "999999\n";
  // What bubblewrap's PID 1 is until the host's init reaps it: exited, not
  // yet waited for.
  pid_t zombie = ::fork();
  if (zombie == 0) {
    if (::setresgid(one.first, one.first, one.first) == 0)
      (void)::setresuid(one.first, one.first, one.first);
    ::_exit(0);
  }
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(zombie), nullptr, WEXITED | WNOWAIT), 0);
  auto lease = UidLease::acquire(run_dir(dir), one);
  EXPECT_TRUE(lease.ok()) << lease.error().message;
  ::waitpid(zombie, nullptr, 0);
}

TEST(UidLeaseTest, TheUidOfAnAccountIsNeverHandedOut) {
  TempDir dir;
  struct passwd* account = ::getpwnam("daemon");
  if (account == nullptr) GTEST_SKIP() << "no 'daemon' account here";
  const UidRange taken{account->pw_uid, account->pw_uid};
  auto lease = UidLease::acquire(run_dir(dir), taken);
  EXPECT_FALSE(lease.ok()) << "handed out the uid of 'daemon'";
}

TEST(UidLeaseTest, ARunDirectoryOthersMayWriteIsRefused) {
  TempDir dir;
  ASSERT_TRUE(UidLease::acquire(run_dir(dir), kRange).ok());
  ASSERT_EQ(::chmod(run_dir(dir).c_str(), 0777), 0);
  auto lease = UidLease::acquire(run_dir(dir), kRange);
  ASSERT_FALSE(lease.ok());
  EXPECT_NE(lease.error().message.find("writable by another user"), std::string::npos);
}

TEST(UidLeaseTest, ParsesARangeAndRefusesReservedIds) {
  auto range = parse_uid_range("1328807936-1328873471");
  ASSERT_TRUE(range.ok()) << range.error().message;
  EXPECT_EQ(range->first, 1328807936u);
  EXPECT_EQ(range->last, 1328873471u);
  for (const char* bad : {"", "5", "9-3", "a-b", "0-10", "65000-66000", "1-4294967295", "1--2"}) {
    EXPECT_FALSE(parse_uid_range(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace o4s::sandbox
