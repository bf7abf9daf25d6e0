// A host killed outright (SIGKILL) left its sink directory in the temporary
// directory for good. Each live host now holds a lock on its own, and the
// next host removes this uid's unlocked ones older than a minute.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/unique_fd.h"
#include "kernel/sink_capture.h"

namespace o4s::kernel {
namespace {

namespace fs = std::filesystem;

class SinkDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "o4s-sink-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    const char* saved = ::getenv("TMPDIR");
    if (saved != nullptr) saved_tmpdir_ = saved;
    ::setenv("TMPDIR", root_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_tmpdir_.empty()) {
      ::unsetenv("TMPDIR");
    } else {
      ::setenv("TMPDIR", saved_tmpdir_.c_str(), 1);
    }
    fs::remove_all(root_);
  }

  // A directory with one file in it, last changed `age_s` seconds ago.
  fs::path leftover(const std::string& name, time_t age_s) {
    fs::path dir = root_ / name;
    fs::create_directory(dir);
    std::ofstream(dir / "out-1.fifo") << "x";
    timespec times[2] = {{::time(nullptr) - age_s, 0}, {::time(nullptr) - age_s, 0}};
    ::utimensat(AT_FDCWD, dir.c_str(), times, 0);
    return dir;
  }

  fs::path root_;
  std::string saved_tmpdir_;
};

TEST_F(SinkDirectoryTest, AKilledHostsDirectoryIsRemovedByTheNextOne) {
  fs::path dead = leftover("openai4s-sinks-dead01", 3600);
  fs::path held = leftover("openai4s-sinks-held01", 3600);
  UniqueFd holder(::open(held.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct flock lock {};
  lock.l_type = F_RDLCK;
  ASSERT_EQ(::fcntl(holder.get(), F_OFD_SETLK, &lock), 0);
  fs::path young = leftover("openai4s-sinks-young1", 5);
  fs::path other = leftover("another-dir", 3600);
  fs::create_directory_symlink(other, root_ / "openai4s-sinks-link01");

  auto made = SinkDirectory::create();
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_FALSE(fs::exists(dead)) << "an unlocked, old directory of this uid goes";
  EXPECT_TRUE(fs::exists(held / "out-1.fifo")) << "a live host's stays";
  EXPECT_TRUE(fs::exists(young / "out-1.fifo")) << "one that may be between mkdtemp and lock stays";
  EXPECT_TRUE(fs::exists(other / "out-1.fifo"));
  EXPECT_TRUE(fs::is_symlink(root_ / "openai4s-sinks-link01")) << "a symlink is never followed";

  // The new one is locked while its object lives, and gone after. The
  // sandbox's ACL edits still take the directory's flock meanwhile.
  const std::string path = made.value()->path();
  UniqueFd probe(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct flock query {};
  query.l_type = F_WRLCK;
  ASSERT_EQ(::fcntl(probe.get(), F_OFD_GETLK, &query), 0);
  EXPECT_EQ(query.l_type, F_RDLCK);
  EXPECT_EQ(::flock(probe.get(), LOCK_EX | LOCK_NB), 0);
  made.value().reset();
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace o4s::kernel
