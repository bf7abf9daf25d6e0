#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "proc/spawn.h"
#include "support/proc_helpers.h"

namespace o4s::proc {
namespace {

using o4s::testing::TempDir;

TEST(ResolveProgramTest, UsesTheChildsPathNotTheParents) {
  TempDir dir;
  std::string exe = dir.write_file("o4s-only-here", "#!/bin/sh\n", 0755);
  EXPECT_EQ(resolve_program("o4s-only-here", {"HOME=/x", "PATH=/nonexistent:" + dir.path()}), exe);
  // The parent's own PATH does not contain the directory.
  EXPECT_EQ(resolve_program("o4s-only-here", {"PATH=/usr/bin:/bin"}), "o4s-only-here");
}

TEST(ResolveProgramTest, FirstMatchingDirectoryWins) {
  TempDir a;
  TempDir b;
  a.write_file("tool", "", 0755);
  std::string second = b.write_file("tool", "", 0755);
  EXPECT_EQ(resolve_program("tool", {"PATH=" + b.path() + ":" + a.path()}), second);
}

TEST(ResolveProgramTest, SkipsFilesThatAreNotExecutable) {
  TempDir a;
  TempDir b;
  a.write_file("tool", "", 0644);
  std::string exe = b.write_file("tool", "", 0755);
  EXPECT_EQ(resolve_program("tool", {"PATH=" + a.path() + ":" + b.path()}), exe);
}

TEST(ResolveProgramTest, NameWithASlashIsUsedAsIs) {
  EXPECT_EQ(resolve_program("./python", {"PATH=/usr/bin"}), "./python");
  EXPECT_EQ(resolve_program("/no/such/prog", {"PATH=/usr/bin"}), "/no/such/prog");
}

TEST(ResolveProgramTest, EmptyOrMissingPathFallsBackToTheDefault) {
  EXPECT_EQ(resolve_program("sh", {}), "/bin/sh");
  EXPECT_EQ(resolve_program("sh", {"PATH="}), "/bin/sh");
}

TEST(ResolveProgramTest, PathPrefixOfAnotherNameIsNotMatched) {
  // "PATHX=" must not be read as PATH.
  TempDir dir;
  dir.write_file("tool", "", 0755);
  EXPECT_EQ(resolve_program("tool", {"PATHX=" + dir.path(), "PATH=/nonexistent"}), "tool");
}

TEST(ResolveProgramTest, EmptyPathEntryNeverMeansTheCurrentDirectory) {
  TempDir dir;
  dir.write_file("o4s-in-cwd", "", 0755);
  char previous[4096];
  ASSERT_NE(::getcwd(previous, sizeof previous), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  std::string resolved = resolve_program("o4s-in-cwd", {"PATH=:/nonexistent:"});
  ASSERT_EQ(::chdir(previous), 0);
  EXPECT_EQ(resolved.find('/'), std::string::npos) << resolved;
}

}  // namespace
}  // namespace o4s::proc
