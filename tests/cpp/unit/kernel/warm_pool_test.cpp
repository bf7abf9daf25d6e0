// kernel::WarmPool against a fake starter (no process, no sandbox): claims
// hand out distinct live workers, the refill is one start at a time and never
// above the size, a failing start is reported at the next claim and then
// retried, a dead pooled worker is discarded, stop() waits out a start in
// flight and discards it, the room callback holds the refill back, and a
// failed start's room is given back.
#include "kernel/warm_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "support/fake_transport.h"

namespace o4s::kernel {
namespace {

using o4s::testing::FakeTransport;

// A fake starter: each start makes a FakeTransport (kept to inspect), may
// be held at a gate, and may be told to fail.
class FakeStarter {
 public:
  Result<WarmWorker> start() {
    std::unique_lock lock(mutex_);
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    ++entered_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
    --in_flight_;
    ++starts_;
    if (failures_left_ > 0) {
      --failures_left_;
      return make_error(ErrorCode::kSandboxUnavailable, "bubblewrap: the sandbox is broken");
    }
    auto transport = std::make_shared<FakeTransport>();
    made_.push_back(transport);
    WarmWorker worker;
    worker.transport = transport;
    return worker;
  }

  WarmPool::Starter function() {
    return [this] { return start(); };
  }
  void hold() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  void fail_next(int count) {
    std::lock_guard lock(mutex_);
    failures_left_ = count;
  }
  // Waits until `count` starts have begun (held at the gate or not).
  void wait_entered(int count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return entered_ >= count; });
  }
  int starts() {
    std::lock_guard lock(mutex_);
    return starts_;
  }
  int max_in_flight() {
    std::lock_guard lock(mutex_);
    return max_in_flight_;
  }
  std::vector<std::shared_ptr<FakeTransport>> made() {
    std::lock_guard lock(mutex_);
    return made_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  int entered_ = 0;
  int starts_ = 0;
  int failures_left_ = 0;
  std::vector<std::shared_ptr<FakeTransport>> made_;
};

TEST(WarmPoolTest, ClaimsHandOutDistinctWorkersAndThePoolRefills) {
  FakeStarter starter;
  WarmPool pool(2, starter.function());
  ASSERT_TRUE(pool.wait_full());
  std::set<Transport*> seen;
  for (int i = 0; i < 2; ++i) {
    auto claimed = pool.claim();
    ASSERT_TRUE(claimed.ok());
    ASSERT_TRUE(claimed.value().has_value());
    EXPECT_TRUE(seen.insert(claimed.value()->transport.get()).second);
  }
  // Both taken: two new starts fill it again, never with a worker handed out.
  ASSERT_TRUE(pool.wait_full());
  EXPECT_EQ(starter.starts(), 4);
  auto next = pool.claim();
  ASSERT_TRUE(next.ok() && next.value().has_value());
  EXPECT_EQ(seen.count(next.value()->transport.get()), 0U);
  pool.stop();
}

TEST(WarmPoolTest, TheRefillIsOneStartAtATimeAndNeverAboveTheSize) {
  FakeStarter starter;
  starter.hold();
  WarmPool pool(3, starter.function());
  starter.wait_entered(1);
  EXPECT_EQ(pool.pending(), 1U);
  EXPECT_EQ(pool.ready(), 0U);
  starter.release();
  ASSERT_TRUE(pool.wait_full());
  EXPECT_EQ(pool.ready(), 3U);
  EXPECT_EQ(pool.pending(), 0U);
  // Full and idle: nothing more is started however often it is woken.
  pool.poke();
  pool.poke();
  EXPECT_TRUE(pool.wait_full());
  EXPECT_EQ(starter.starts(), 3);
  EXPECT_EQ(starter.max_in_flight(), 1);
  pool.stop();
}

TEST(WarmPoolTest, AnEmptyPoolAnswersNoneAndStartsNothing) {
  FakeStarter starter;
  WarmPool pool(0, starter.function());
  auto claimed = pool.claim();
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed.value().has_value());
  EXPECT_TRUE(pool.wait_full());  // full at size 0: nothing to wait for
  EXPECT_EQ(starter.starts(), 0);
}

TEST(WarmPoolTest, AFailingStartIsReportedAtTheNextClaimWhichRetries) {
  FakeStarter starter;
  starter.fail_next(1);
  WarmPool pool(1, starter.function());
  // The failure stops the refill: wait_full answers instead of hanging.
  EXPECT_FALSE(pool.wait_full());
  EXPECT_EQ(starter.starts(), 1);
  auto claimed = pool.claim();
  ASSERT_FALSE(claimed.ok());
  EXPECT_NE(claimed.error().message.find("the sandbox is broken"), std::string::npos);
  // The claim that reported it let the pool try again, and that start works.
  ASSERT_TRUE(pool.wait_full());
  auto retried = pool.claim();
  ASSERT_TRUE(retried.ok());
  EXPECT_TRUE(retried.value().has_value());
  pool.stop();
}

TEST(WarmPoolTest, ADeadPooledWorkerIsDiscardedNotHandedOut) {
  FakeStarter starter;
  WarmPool pool(1, starter.function());
  ASSERT_TRUE(pool.wait_full());
  auto dead = starter.made().at(0);
  dead->set_alive(false);
  auto claimed = pool.claim();
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed.value().has_value());  // the caller starts one normally
  EXPECT_EQ(dead->close_calls(), 1);
  // Its replacement is started and handed out next.
  ASSERT_TRUE(pool.wait_full());
  auto next = pool.claim();
  ASSERT_TRUE(next.ok() && next.value().has_value());
  EXPECT_NE(next.value()->transport.get(), dead.get());
  pool.stop();
}

TEST(WarmPoolTest, StopWaitsOutAStartInFlightAndDiscardsItsWorker) {
  FakeStarter starter;
  starter.hold();
  WarmPool pool(2, starter.function());
  starter.wait_entered(1);
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    pool.stop();
    stopped = true;
  });
  // stop() is waiting for the start in flight (its thread is the refill's).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(stopped.load());
  starter.release();
  stopper.join();
  EXPECT_EQ(starter.starts(), 1);  // no start after stop
  auto made = starter.made();
  ASSERT_EQ(made.size(), 1U);
  EXPECT_EQ(made[0]->close_calls(), 1);  // the late worker was stopped
  EXPECT_EQ(pool.ready(), 0U);
  auto claimed = pool.claim();
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed.value().has_value());
  pool.stop();  // idempotent
}

TEST(WarmPoolTest, StopDiscardsTheReadyWorkers) {
  FakeStarter starter;
  WarmPool pool(2, starter.function());
  ASSERT_TRUE(pool.wait_full());
  pool.stop();
  for (const auto& transport : starter.made()) EXPECT_EQ(transport->close_calls(), 1);
}

TEST(WarmPoolTest, TheRoomCallbackHoldsTheRefillBackUntilPoked) {
  FakeStarter starter;
  std::atomic<std::size_t> limit{1};
  std::mutex seen_mutex;
  std::vector<std::size_t> seen;
  WarmPool pool(3, starter.function(), [&](std::size_t held) {
    std::lock_guard lock(seen_mutex);
    seen.push_back(held);
    return held < limit.load();
  });
  EXPECT_FALSE(pool.wait_full());  // it stopped at the owner's limit
  EXPECT_EQ(pool.ready(), 1U);
  EXPECT_EQ(starter.starts(), 1);
  limit = 3;
  pool.poke();  // the owner's limits changed
  ASSERT_TRUE(pool.wait_full());
  EXPECT_EQ(starter.starts(), 3);
  {
    std::lock_guard lock(seen_mutex);
    // Asked with the held count before each start: never above the size.
    for (std::size_t held : seen) EXPECT_LT(held, 3U);
  }
  pool.stop();
}

TEST(WarmPoolTest, AFailedStartGivesTheRoomItWasGrantedBack) {
  // The owner's ledger, as the MCP server keeps one per pool under
  // --max-kernels: a grant counts the start, a release sets the truth.
  FakeStarter starter;
  std::mutex ledger_mutex;
  std::size_t counted = 0;
  WarmPool pool(
      1, starter.function(),
      [&](std::size_t held) {
        std::lock_guard lock(ledger_mutex);
        counted = held + 1;
        return true;
      },
      [&](std::size_t held) {
        std::lock_guard lock(ledger_mutex);
        counted = held;
      });
  ASSERT_TRUE(pool.wait_full());
  starter.fail_next(1);
  auto claimed = pool.claim();  // its replacement's start fails
  ASSERT_TRUE(claimed.ok() && claimed.value().has_value());
  EXPECT_FALSE(pool.wait_full());
  EXPECT_EQ(starter.starts(), 2);
  {
    // Nothing runs for the pool now, and it asks for no room until its
    // next claim: none may stay counted.
    std::lock_guard lock(ledger_mutex);
    EXPECT_EQ(counted, 0U);
  }
  pool.stop();
}

TEST(WarmPoolTest, TheRefillWaitsWhileCallersStartTheirOwn) {
  FakeStarter starter;
  WarmPool pool(1, starter.function());
  ASSERT_TRUE(pool.wait_full());
  {
    WarmPool::FallbackStart first(pool);
    WarmPool::FallbackStart second(pool);
    auto claimed = pool.claim();  // empties the pool
    ASSERT_TRUE(claimed.ok() && claimed.value().has_value());
    // Callers' own starts in flight: no refill start meanwhile.
    EXPECT_FALSE(pool.wait_full());
    EXPECT_EQ(pool.pending(), 0U);
    EXPECT_EQ(starter.starts(), 1);
  }
  // The last one ended: the refill resumes.
  ASSERT_TRUE(pool.wait_full());
  EXPECT_EQ(starter.starts(), 2);
  pool.stop();
}

}  // namespace
}  // namespace o4s::kernel
