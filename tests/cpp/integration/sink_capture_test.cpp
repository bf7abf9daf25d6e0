// Host-side sink capture through real fifos and the real supervisor thread.
#include "kernel/sink_capture.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace o4s::kernel {
namespace {

using std::chrono::milliseconds;

// Writes `total` bytes of `fill` into the fifo the way R does: a blocking
// open for writing, then plain writes.
void write_fifo(const std::string& path, std::size_t total, char fill) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::string block(64 * 1024, fill);
  std::size_t left = total;
  while (left > 0) {
    std::size_t n = std::min(left, block.size());
    ssize_t wrote = ::write(fd, block.data(), n);
    ASSERT_GT(wrote, 0);
    left -= static_cast<std::size_t>(wrote);
  }
  ::close(fd);
}

TEST(SinkCapture, KeepsTheFirstMegabyteCountsEverythingAndSaysItTruncated) {
  auto dir = SinkDirectory::create();
  ASSERT_TRUE(dir) << dir.error().message;
  auto capture = CellCapture::open(*dir.value());
  ASSERT_TRUE(capture) << capture.error().message;
  const std::size_t total = 5 * kSinkRetainedBytes + 123;
  std::thread out([&] { write_fifo(capture.value()->out_path(), total, 'o'); });
  std::thread err([&] { write_fifo(capture.value()->err_path(), 10, 'e'); });
  out.join();
  err.join();
  CellCapture::Finished finished = capture.value()->finish(kSinkFinishGrace);
  EXPECT_EQ(finished.stdout_text,
            std::string(kSinkRetainedBytes, 'o') + std::string(kSinkTruncationMarker));
  EXPECT_EQ(finished.stderr_text, std::string(10, 'e'));
  EXPECT_EQ(finished.usage["stdout_seen_bytes"], total);
  EXPECT_EQ(finished.usage["stdout_retained_bytes"], kSinkRetainedBytes);
  EXPECT_EQ(finished.usage["stdout_dropped_bytes"], total - kSinkRetainedBytes);
  EXPECT_EQ(finished.usage["stdout_truncated"], true);
  EXPECT_EQ(finished.usage["stderr_truncated"], false);
  EXPECT_EQ(finished.usage["stderr_seen_bytes"], 10u);
}

TEST(SinkCapture, AFifoNobodyOpenedFinishesWithoutWaitingOutTheGrace) {
  auto dir = SinkDirectory::create();
  ASSERT_TRUE(dir);
  auto capture = CellCapture::open(*dir.value());
  ASSERT_TRUE(capture);
  auto started = std::chrono::steady_clock::now();
  CellCapture::Finished finished = capture.value()->finish(milliseconds(20000));
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(10000));
  EXPECT_EQ(finished.stdout_text, "");
  EXPECT_EQ(finished.usage["stdout_seen_bytes"], 0u);
}

TEST(SinkCapture, FifosAreUnlinkedAndTheDirectoryRemoved) {
  std::string path;
  std::string out;
  {
    auto dir = SinkDirectory::create();
    ASSERT_TRUE(dir);
    path = dir.value()->path();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    {
      auto capture = CellCapture::open(*dir.value());
      ASSERT_TRUE(capture);
      out = capture.value()->out_path();
      ASSERT_EQ(::stat(out.c_str(), &st), 0);
      EXPECT_TRUE(S_ISFIFO(st.st_mode));
      // Writable by the sandbox's own uid, which only the 0700 directory's
      // search entry lets near it.
      EXPECT_EQ(st.st_mode & 0777, 0622u);
    }
    EXPECT_NE(::access(out.c_str(), F_OK), 0);
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

TEST(SinkCapture, LiveStdoutIsPassedOnWholeCharactersOnly) {
  auto dir = SinkDirectory::create();
  ASSERT_TRUE(dir);
  auto capture = CellCapture::open(*dir.value());
  ASSERT_TRUE(capture);
  int fd = ::open(capture.value()->out_path().c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  // "é" is C3 A9: send its first byte alone.
  ASSERT_EQ(::write(fd, "caf\xC3", 4), 4);
  std::string live;
  for (int i = 0; i < 500 && live != "caf"; ++i) {
    live += capture.value()->take_live_stdout();
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(live, "caf");
  ASSERT_EQ(::write(fd, "\xA9!", 2), 2);
  ::close(fd);
  CellCapture::Finished finished = capture.value()->finish(kSinkFinishGrace);
  EXPECT_EQ(live + finished.live_tail, "caf\xC3\xA9!");
  EXPECT_EQ(finished.stdout_text, "caf\xC3\xA9!");
}

// Collects what the stray target is given (the worker's log in the host).
class CollectedLog final : public proc::DrainTarget {
 public:
  void append(std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    text_.append(bytes);
  }
  void mark_closed() override {}
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  std::mutex mutex_;
  std::string text_;
};

TEST(SinkCapture, AWriterLeftRunningGoesToTheLogAndNeverHoldsTheCell) {
  auto dir = SinkDirectory::create();
  ASSERT_TRUE(dir);
  auto capture = CellCapture::open(*dir.value());
  ASSERT_TRUE(capture);
  // A process the cell started and left running: it holds the fifo open.
  int fd = ::open(capture.value()->out_path().c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "in the cell\n", 12), 12);
  auto log = std::make_shared<CollectedLog>();
  auto started = std::chrono::steady_clock::now();
  CellCapture::Finished finished = capture.value()->finish(milliseconds(0), log);
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(1500));
  EXPECT_EQ(finished.stdout_text, "in the cell\n");
  // What it writes after the response is drained to the log (a writer is
  // never left blocked on a full fifo), even after the capture is gone.
  capture.value().reset();
  std::string later(200 * 1024, 'l');
  for (std::size_t done = 0; done < later.size();) {
    ssize_t n = ::write(fd, later.data() + done, later.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  for (int i = 0; i < 500 && log->text().size() < later.size(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(log->text(), later);
}

}  // namespace
}  // namespace o4s::kernel
