// read_file / write_file against real directories: no escape by "..", by
// a symlink, or by swapping the workspace while a read is under way.
#include "mcp/workspace_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "support/temp_dir.h"

namespace o4s::mcp {
namespace {

class WorkspaceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    workspace_ = dir_.path() + "/ws";
    outside_ = dir_.path() + "/outside";
    ASSERT_EQ(::mkdir(workspace_.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(outside_.c_str(), 0700), 0);
    dir_.write_file("ws/data.txt", "inside");
    dir_.write_file("outside/data.txt", "SECRET");
    pinned_ = directory_id(workspace_).value();
  }
  Result<Json> read(const std::string& path) {
    return read_workspace_file(workspace_, pinned_, path, 0, 1 << 20);
  }

  testing::TempDir dir_;
  std::string workspace_;
  std::string outside_;
  DirectoryId pinned_;
};

TEST_F(WorkspaceFiles, ReadsAndWritesInside) {
  ASSERT_TRUE(write_workspace_file(workspace_, pinned_, "sub/dir/new.txt", "hello"));
  auto read_back = read("sub/dir/new.txt");
  ASSERT_TRUE(read_back) << read_back.error().message;
  EXPECT_EQ(read_back.value()["content"], "hello");
  EXPECT_EQ(read(workspace_ + "/data.txt").value()["content"], "inside");
  // A symlink that stays inside is followed.
  ASSERT_EQ(::symlink("data.txt", (workspace_ + "/alias").c_str()), 0);
  EXPECT_EQ(read("alias").value()["content"], "inside");
}

TEST_F(WorkspaceFiles, RefusesEveryWayOut) {
  ASSERT_EQ(::symlink((outside_ + "/data.txt").c_str(), (workspace_ + "/abs").c_str()), 0);
  ASSERT_EQ(::symlink("../outside/data.txt", (workspace_ + "/rel").c_str()), 0);
  ASSERT_EQ(::symlink(outside_.c_str(), (workspace_ + "/dir").c_str()), 0);
  for (const char* path :
       {"../outside/data.txt", "abs", "rel", "dir/data.txt", "/etc/passwd", "", "."}) {
    auto result = read(path);
    EXPECT_FALSE(result) << path;
  }
  EXPECT_FALSE(read(outside_ + "/data.txt"));
  EXPECT_FALSE(write_workspace_file(workspace_, pinned_, "dir/x.txt", "x"));
  EXPECT_FALSE(write_workspace_file(workspace_, pinned_, "abs", "x"));
}

TEST_F(WorkspaceFiles, RefusesAWorkspaceThatWasSwapped) {
  ASSERT_EQ(::rename(workspace_.c_str(), (dir_.path() + "/moved").c_str()), 0);
  ASSERT_EQ(::symlink(outside_.c_str(), workspace_.c_str()), 0);
  auto result = read("data.txt");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("no longer the directory"), std::string::npos);
  EXPECT_FALSE(write_workspace_file(workspace_, pinned_, "data.txt", "x"));
}

// The attacker: a cell flips the workspace between the real directory and
// a symlink to another one while the server reads. The read must give the
// workspace's file or refuse, never the other directory's.
TEST_F(WorkspaceFiles, ASwapDuringTheReadNeverLeaksTheOtherDirectory) {
  const std::string real = dir_.path() + "/real";
  ASSERT_EQ(::rename(workspace_.c_str(), real.c_str()), 0);
  ASSERT_EQ(::symlink(real.c_str(), workspace_.c_str()), 0);
  const std::string aside = dir_.path() + "/aside";
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    while (!stop) {
      // Point the workspace's name at the outside directory and back.
      (void)::symlink(outside_.c_str(), aside.c_str());
      (void)::rename(aside.c_str(), workspace_.c_str());
      (void)::symlink(real.c_str(), aside.c_str());
      (void)::rename(aside.c_str(), workspace_.c_str());
    }
  });
  int leaked = 0;
  for (int i = 0; i < 20000; ++i) {
    auto result = read("data.txt");
    if (result && result.value()["content"] == "SECRET") ++leaked;
  }
  stop = true;
  flipper.join();
  EXPECT_EQ(leaked, 0);
}

}  // namespace
}  // namespace o4s::mcp
