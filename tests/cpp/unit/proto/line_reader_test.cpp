#include "proto/line_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/pipe.h"
#include "base/unique_fd.h"

namespace o4s::proto {
namespace {

// A SOCK_SEQPACKET pair: every send() arrives as exactly one read(), so a
// test decides where the reader's reads split the stream. A packet must fit
// the reader's free buffer space (the rest of a packet would be discarded),
// which every test below respects.
struct PacketChannel {
  UniqueFd reader;
  UniqueFd writer;

  PacketChannel() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
    reader.reset(fds[0]);
    writer.reset(fds[1]);
  }
  void send(const std::string& packet) const {
    ASSERT_EQ(::send(writer.get(), packet.data(), packet.size(), 0),
              static_cast<ssize_t>(packet.size()));
  }
  void close_writer() { writer.reset(); }
};

// A plain pipe fed by a writer thread, for streams larger than any buffer.
struct StreamChannel {
  UniqueFd reader;
  UniqueFd writer;
  std::thread thread;

  StreamChannel() {
    auto pipe = make_pipe();
    if (!pipe) std::abort();
    reader = std::move(pipe->read);
    writer = std::move(pipe->write);
  }
  ~StreamChannel() {
    // Close the read end first: a writer blocked on a full pipe after a
    // failed assertion then gets EPIPE instead of hanging the join.
    reader.reset();
    if (thread.joinable()) thread.join();
  }
  // Writes `produce()`'s pieces from a thread, then closes the write end.
  template <typename Producer>
  void feed(Producer produce) {
    thread = std::thread([this, produce]() mutable {
      auto write_all = [this](std::string_view data) {
        while (!data.empty()) {
          ssize_t n = ::write(writer.get(), data.data(), data.size());
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) return;
          data.remove_prefix(static_cast<std::size_t>(n));
        }
      };
      produce(write_all);
      writer.reset();
    });
  }
};

std::string next_line(LineReader& reader) {
  auto line = reader.read_line();
  if (!line.ok()) return "<error: " + line.error().message + ">";
  if (!line.value()) return "<eof>";
  return *line.value();
}

TEST(LineReaderTest, ReassemblesALineSplitAcrossReads) {
  PacketChannel channel;
  channel.send("ab");
  channel.send("c\nde");
  channel.send("f\n");
  channel.close_writer();
  LineReader reader(channel.reader.get(), 1024);
  EXPECT_EQ(next_line(reader), "abc\n");
  EXPECT_EQ(next_line(reader), "def\n");
  EXPECT_EQ(next_line(reader), "<eof>");
}

TEST(LineReaderTest, ReturnsSeveralLinesFromOneRead) {
  PacketChannel channel;
  channel.send("a\nbb\n\nccc\n");
  channel.close_writer();
  LineReader reader(channel.reader.get(), 1024);
  EXPECT_EQ(next_line(reader), "a\n");
  EXPECT_EQ(next_line(reader), "bb\n");
  EXPECT_EQ(next_line(reader), "\n");
  EXPECT_EQ(next_line(reader), "ccc\n");
  EXPECT_EQ(next_line(reader), "<eof>");
}

TEST(LineReaderTest, FinalLineWithoutNewlineIsStillALine) {
  PacketChannel channel;
  channel.send("one\ntwo");
  channel.close_writer();
  LineReader reader(channel.reader.get(), 1024);
  EXPECT_EQ(next_line(reader), "one\n");
  EXPECT_EQ(next_line(reader), "two");
  EXPECT_EQ(next_line(reader), "<eof>");
}

TEST(LineReaderTest, EndOfStreamIsStable) {
  PacketChannel channel;
  channel.close_writer();
  LineReader reader(channel.reader.get(), 1024);
  EXPECT_EQ(next_line(reader), "<eof>");
  EXPECT_EQ(next_line(reader), "<eof>");
  EXPECT_EQ(reader.oversized_lines(), 0U);
}

TEST(LineReaderTest, ReadErrorIsASystemError) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  UniqueFd read_end = std::move(pipe->read);
  UniqueFd write_end = std::move(pipe->write);
  // Reading the write end of a pipe fails with EBADF.
  LineReader reader(write_end.get(), 1024);
  auto line = reader.read_line();
  ASSERT_FALSE(line.ok());
  EXPECT_EQ(line.error().code, ErrorCode::kSystem);
  EXPECT_EQ(line.error().sys_errno, EBADF);
}

TEST(LineReaderTest, LineOfExactlyTheCapIsAccepted) {
  PacketChannel channel;
  channel.send("1234567\n");   // 8 bytes with its newline: at the cap
  channel.send("12345678\n");  // 9 bytes: over it
  channel.send("ok\n");
  channel.close_writer();
  LineReader reader(channel.reader.get(), 8);
  EXPECT_EQ(next_line(reader), "1234567\n");
  auto over = reader.read_line();
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(next_line(reader), "ok\n");
  EXPECT_EQ(reader.oversized_lines(), 1U);
}

TEST(LineReaderTest, OversizedLineArrivingWholeIsSkipped) {
  // The whole oversized line (newline included) lands in one read: the cap
  // must still apply, not only to lines still waiting for their newline.
  PacketChannel channel;
  channel.send(std::string(40, 'x') + "\nnext\n");
  channel.close_writer();
  LineReader reader(channel.reader.get(), 16);
  auto over = reader.read_line();
  ASSERT_FALSE(over.ok()) << "an over-cap line was returned";
  EXPECT_EQ(over.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(reader.oversized_lines(), 1U);
  EXPECT_EQ(next_line(reader), "next\n");
  EXPECT_EQ(next_line(reader), "<eof>");
}

TEST(LineReaderTest, OversizedStreamedLineIsSkippedAndTheNextLineReads) {
  StreamChannel channel;
  channel.feed([](auto write_all) {
    write_all("before\n");
    std::string chunk(30'000, 'y');
    for (int i = 0; i < 10; ++i) write_all(chunk);
    write_all("\nafter\n");
  });
  LineReader reader(channel.reader.get(), 1024);
  EXPECT_EQ(next_line(reader), "before\n");
  auto over = reader.read_line();
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(over.error().message, "oversized frame dropped (over the frame cap)");
  EXPECT_EQ(next_line(reader), "after\n");
  EXPECT_EQ(next_line(reader), "<eof>");
  EXPECT_EQ(reader.oversized_lines(), 1U);
}

TEST(LineReaderTest, OversizedLineCutOffByEndOfStream) {
  PacketChannel channel;
  channel.send(std::string(100, 'z'));
  channel.close_writer();
  LineReader reader(channel.reader.get(), 16);
  auto over = reader.read_line();
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(over.error().message, "oversized frame cut off by end of stream");
  EXPECT_EQ(next_line(reader), "<eof>");
  EXPECT_EQ(reader.oversized_lines(), 1U);
}

// The reader's buffer starts at 4 KiB. These two tests fill it exactly with
// one read, return a complete first line, and leave a partial second line at
// the end of the buffer, so the next read has to compact the buffer before it
// can append. The newline search must continue where it left off in the
// compacted buffer.
constexpr std::size_t kInitialBuffer = 4096;

TEST(LineReaderTest, PartialLineAtTheEndOfAFullBufferIsCompleted) {
  PacketChannel channel;
  const std::string first = std::string(99, 'A') + "\n";
  const std::string partial(kInitialBuffer - first.size(), 'B');
  channel.send(first + partial);
  channel.send("tail\n");  // shorter than the compacted gap
  channel.close_writer();
  LineReader reader(channel.reader.get(), 1 << 20);
  EXPECT_EQ(next_line(reader), first);
  EXPECT_EQ(next_line(reader), partial + "tail\n");
  EXPECT_EQ(next_line(reader), "<eof>");
}

TEST(LineReaderTest, NewlineInTheBytesReadAfterCompactionIsFound) {
  PacketChannel channel;
  const std::string first = std::string(99, 'A') + "\n";
  const std::string partial(kInitialBuffer - first.size(), 'B');
  channel.send(first + partial);
  // Exactly as long as the gap compaction opens, with a newline inside.
  channel.send(std::string(49, 'C') + "\n" + std::string(50, 'D'));
  channel.send("E\n");
  channel.close_writer();
  LineReader reader(channel.reader.get(), 1 << 20);
  EXPECT_EQ(next_line(reader), first);
  EXPECT_EQ(next_line(reader), partial + std::string(49, 'C') + "\n");
  EXPECT_EQ(next_line(reader), std::string(50, 'D') + "E\n");
  EXPECT_EQ(next_line(reader), "<eof>");
}

TEST(LineReaderTest, RandomLinesInRandomChunksAllArriveIntact) {
  std::mt19937 rng(20240611);
  std::vector<std::string> lines;
  for (int i = 0; i < 3000; ++i) {
    std::size_t length = std::uniform_int_distribution<std::size_t>(0, 9000)(rng);
    std::string line(length, static_cast<char>('a' + i % 26));
    line += "\n";
    lines.push_back(std::move(line));
  }
  StreamChannel channel;
  channel.feed([&lines, seed = rng()](auto write_all) {
    std::mt19937 chunks(seed);
    std::string all;
    for (const auto& line : lines) all += line;
    std::string_view rest(all);
    while (!rest.empty()) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, 100'000)(chunks);
      n = std::min(n, rest.size());
      write_all(rest.substr(0, n));
      rest.remove_prefix(n);
    }
  });
  LineReader reader(channel.reader.get(), 1 << 20);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string got = next_line(reader);
    ASSERT_EQ(got.size(), lines[i].size()) << "line " << i;
    ASSERT_EQ(got, lines[i]) << "line " << i;
  }
  EXPECT_EQ(next_line(reader), "<eof>");
}

long max_rss_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(LineReaderTest, MemoryStaysBoundedWhileDiscardingAHugeLine) {
  // 128 MiB without a newline against a 64 KiB cap: a reader that buffered
  // the line before checking the cap would raise the peak RSS by the line.
  constexpr std::size_t kChunk = 1 << 16;
  constexpr std::size_t kChunks = 2048;
  const long before = max_rss_kib();
  StreamChannel channel;
  channel.feed([](auto write_all) {
    const std::string chunk(kChunk, 'h');
    for (std::size_t i = 0; i < kChunks; ++i) write_all(chunk);
    write_all("\nafter\n");
  });
  LineReader reader(channel.reader.get(), kChunk);
  auto over = reader.read_line();
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(next_line(reader), "after\n");
  const long grown_kib = max_rss_kib() - before;
  EXPECT_LT(grown_kib, 32 * 1024) << "peak RSS grew by " << grown_kib << " KiB";
}

// A non-blocking pipe read end, as PipeTransport uses it.
struct NonBlockingPipe {
  UniqueFd reader;
  UniqueFd writer;

  NonBlockingPipe() {
    auto pipe = make_pipe(O_NONBLOCK);
    if (!pipe) std::abort();
    reader = std::move(pipe->read);
    writer = std::move(pipe->write);
  }
  void write(const std::string& data) const {
    ASSERT_EQ(::write(writer.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
};

TEST(LineReaderSpinTest, ANonBlockingFdWaitsForLinesPastTheSpin) {
  NonBlockingPipe pipe;
  LineReader reader(pipe.reader.get(), 1024);
  reader.set_spin_budget(std::chrono::microseconds(200));
  reader.arm_spin();
  // Arrives long after the spin: the reader must sleep in poll, not fail
  // with EAGAIN or busy-wait.
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    pipe.write("late\n");
  });
  auto cpu_before = std::clock();
  EXPECT_EQ(next_line(reader), "late\n");
  late.join();
  double cpu_seconds = static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;
  EXPECT_LT(cpu_seconds, 0.03);  // 50 ms of waiting, almost none of it spun
}

TEST(LineReaderSpinTest, AnArmedReadTakesALineThatArrivesWithinTheSpin) {
  NonBlockingPipe pipe;
  LineReader reader(pipe.reader.get(), 1024);
  reader.set_spin_budget(std::chrono::seconds(5));
  reader.arm_spin();
  std::thread soon([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    pipe.write("a\nb");
  });
  EXPECT_EQ(next_line(reader), "a\n");
  soon.join();
  pipe.write("\n");
  EXPECT_EQ(next_line(reader), "b\n");
  pipe.writer.reset();
  EXPECT_EQ(next_line(reader), "<eof>");
}

TEST(LineReaderSpinTest, AWaitThatHadToSleepDisarmsTheSpin) {
  NonBlockingPipe pipe;
  LineReader reader(pipe.reader.get(), 1024);
  reader.set_spin_budget(std::chrono::milliseconds(5));
  reader.arm_spin();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the spin
    pipe.write("first\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    pipe.write("second\n");
  });
  EXPECT_EQ(next_line(reader), "first\n");
  // The first wait slept, so this one does not spin: with the budget raised
  // to far more than the writer's pause, a spin would burn ~150 ms of CPU.
  reader.set_spin_budget(std::chrono::seconds(5));
  auto cpu_before = std::clock();
  EXPECT_EQ(next_line(reader), "second\n");
  writer.join();
  double cpu_seconds = static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;
  EXPECT_LT(cpu_seconds, 0.05);
}

TEST(LineReaderSpinTest, EndOfStreamEndsAWait) {
  NonBlockingPipe pipe;
  LineReader reader(pipe.reader.get(), 1024);
  reader.set_spin_budget(std::chrono::microseconds(100));
  reader.arm_spin();
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pipe.write("partial");
    pipe.writer.reset();
  });
  EXPECT_EQ(next_line(reader), "partial");
  closer.join();
  EXPECT_EQ(next_line(reader), "<eof>");
}

}  // namespace
}  // namespace o4s::proto
