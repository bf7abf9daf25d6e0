// The Jupyter kernel's stdout coalescing: pieces within the window become
// one message, a lone piece still goes out on its own, a large pending text
// goes out at once, and other output never overtakes pending text.
#include "jupyter/stream_coalescer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace o4s::jupyter {
namespace {

using namespace std::chrono_literals;

// What was published, in order, from whichever thread.
class Recorder {
 public:
  StreamCoalescer::Publish publisher() {
    return [this](const std::string& text) { add("stdout:" + text); };
  }
  void add(const std::string& entry) {
    std::lock_guard lock(mutex_);
    entries_.push_back(entry);
    changed_.notify_all();
  }
  // Waits (bounded, generously: this is no speed assertion) for n entries.
  std::vector<std::string> wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, 10s, [&] { return entries_.size() >= n; });
    return entries_;
  }
  std::vector<std::string> now() {
    std::lock_guard lock(mutex_);
    return entries_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> entries_;
};

TEST(StreamCoalescerTest, PiecesWithinTheWindowAreOneMessage) {
  Recorder recorder;
  StreamCoalescer stream(recorder.publisher(), 10s);
  stream.add("hello");
  stream.add("\n");
  EXPECT_TRUE(recorder.now().empty());
  stream.flush();
  EXPECT_EQ(recorder.now(), std::vector<std::string>{"stdout:hello\n"});
}

TEST(StreamCoalescerTest, ALonePieceGoesOutWhenTheWindowEnds) {
  Recorder recorder;
  StreamCoalescer stream(recorder.publisher(), 1ms);
  stream.add("early\n");
  EXPECT_EQ(recorder.wait_for(1), std::vector<std::string>{"stdout:early\n"});
  stream.add("again\n");  // a second window, on the same flusher
  EXPECT_EQ(recorder.wait_for(2), (std::vector<std::string>{"stdout:early\n", "stdout:again\n"}));
}

TEST(StreamCoalescerTest, ALineWhoseEndIsLateIsStillOneMessage) {
  Recorder recorder;
  // print()'s text, then its "\n" after the short window: one message.
  StreamCoalescer stream(recorder.publisher(), 1ms, StreamCoalescer::kDefaultMaxPending, 10s);
  stream.add("one");
  std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(recorder.now().empty());
  stream.add("\n");
  EXPECT_EQ(recorder.wait_for(1), std::vector<std::string>{"stdout:one\n"});
}

TEST(StreamCoalescerTest, APartialLineStillGoesOutWithoutItsEnd) {
  Recorder recorder;
  StreamCoalescer stream(recorder.publisher(), 1ms, StreamCoalescer::kDefaultMaxPending, 5ms);
  stream.add("progress 10%");
  EXPECT_EQ(recorder.wait_for(1), std::vector<std::string>{"stdout:progress 10%"});
}

TEST(StreamCoalescerTest, ALargePendingTextGoesOutAtOnce) {
  Recorder recorder;
  StreamCoalescer stream(recorder.publisher(), 10s, 8);
  stream.add("1234");
  EXPECT_TRUE(recorder.now().empty());
  stream.add("5678");
  EXPECT_EQ(recorder.now(), std::vector<std::string>{"stdout:12345678"});
}

TEST(StreamCoalescerTest, OtherOutputComesAfterThePendingText) {
  Recorder recorder;
  StreamCoalescer stream(recorder.publisher(), 10s);
  stream.add("one\n");
  stream.in_order([&] { recorder.add("display"); });
  stream.add("two\n");
  stream.in_order([&] { recorder.add("stderr"); });
  EXPECT_EQ(recorder.now(),
            (std::vector<std::string>{"stdout:one\n", "display", "stdout:two\n", "stderr"}));
}

TEST(StreamCoalescerTest, TheDestructorPublishesWhatIsPending) {
  Recorder recorder;
  {
    StreamCoalescer stream(recorder.publisher(), 10s);
    stream.add("last\n");
  }
  EXPECT_EQ(recorder.now(), std::vector<std::string>{"stdout:last\n"});
}

TEST(StreamCoalescerTest, EmptyTextPublishesNothing) {
  Recorder recorder;
  StreamCoalescer stream(recorder.publisher(), 1ms);
  stream.add("");
  stream.flush();
  stream.in_order([] {});
  EXPECT_TRUE(recorder.now().empty());
}

}  // namespace
}  // namespace o4s::jupyter
