#include "base/file_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/pipe.h"
#include "base/unique_fd.h"
#include "support/temp_dir.h"

namespace o4s {
namespace {

using testing::TempDir;

// Bytes that are not text and more than one read's worth, so a reader that
// stopped at a NUL or after its first buffer would be caught.
std::string several_reads_of_bytes() {
  std::string bytes;
  for (int i = 0; i < 3 * 4096 + 17; ++i) bytes.push_back(static_cast<char>(i % 256));
  return bytes;
}

TEST(ReadFileTest, ReadsTheWholeFileAcrossSeveralReads) {
  TempDir dir;
  const std::string content = several_reads_of_bytes();
  auto read = read_file(dir.write_file("data.bin", content));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read.value(), content);
}

TEST(ReadFileTest, AnEmptyFileIsAnEmptyString) {
  TempDir dir;
  auto read = read_file(dir.write_file("empty", ""));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read.value(), "");
}

TEST(ReadFileTest, ProcfsFilesReportSizeZeroButAreReadWhole) {
  auto read = read_file("/proc/self/status");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_NE(read->find("\nPid:\t" + std::to_string(::getpid()) + "\n"), std::string::npos);
}

TEST(ReadFileTest, AMissingFileIsAnOpenErrorWithItsErrno) {
  TempDir dir;
  const std::string path = dir.file("absent");
  auto read = read_file(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kSystem);
  EXPECT_EQ(read.error().sys_errno, ENOENT);
  EXPECT_EQ(read.error().message, "open " + path + ": ENOENT");
}

TEST(ReadFileTest, ADirectoryOpensButFailsToReadWithItsErrno) {
  TempDir dir;
  auto read = read_file(dir.path());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().sys_errno, EISDIR);
  EXPECT_EQ(read.error().message, "read " + dir.path() + ": EISDIR");
}

TEST(ReadToEndTest, ReadsAPipeUntilItsWriterCloses) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  ASSERT_EQ(::write(pipe->write.get(), "first ", 6), 6);
  ASSERT_EQ(::write(pipe->write.get(), "second", 6), 6);
  pipe->write.reset();
  auto read = read_to_end(pipe->read.get(), "the pipe");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read.value(), "first second");
}

TEST(ReadToEndTest, StartsAtTheCurrentOffset) {
  TempDir dir;
  UniqueFd fd(::open(dir.write_file("text", "skipped|kept").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::lseek(fd.get(), 8, SEEK_SET), 8);
  auto read = read_to_end(fd.get(), "text");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read.value(), "kept");
}

TEST(ReadToEndTest, AFailedReadNamesItsSource) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  // The write end of a pipe cannot be read: EBADF.
  auto read = read_to_end(pipe->write.get(), "the wrong end");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().sys_errno, EBADF);
  EXPECT_EQ(read.error().message, "read the wrong end: EBADF");
}

}  // namespace
}  // namespace o4s
