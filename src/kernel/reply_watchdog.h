// The bound on an idle request (complete, inspect, is_complete, variables,
// a stdout resend): a worker that stays silent past it is stopped, which is
// the transport-neutral way to wake the single blocked reader (no second
// reader is ever started). One thread per manager, started on first use,
// so arming costs a lock and a notify rather than a thread per request.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "kernel/transport.h"

namespace o4s::kernel {

class ReplyWatchdog {
 public:
  ReplyWatchdog() = default;
  ~ReplyWatchdog();
  ReplyWatchdog(const ReplyWatchdog&) = delete;
  ReplyWatchdog& operator=(const ReplyWatchdog&) = delete;

  // Kills `transport` unless disarm() comes within `seconds`. Arming again
  // restarts the clock (after the host itself waited, e.g. on an approval).
  void arm(std::shared_ptr<Transport> transport, double seconds);
  // Stops the clock; true when it had already fired (the worker is gone).
  bool disarm();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::shared_ptr<Transport> target_;  // armed while set
  std::chrono::steady_clock::time_point deadline_;
  bool fired_ = false;
  bool stopping_ = false;
  std::optional<std::thread> thread_;
};

// Disarms on every way out of a request; finish() disarms and says whether
// the bound had passed (then the worker was stopped, whatever was read).
class ArmedReply {
 public:
  ArmedReply(ReplyWatchdog& watchdog, std::shared_ptr<Transport> transport, double seconds)
      : watchdog_(watchdog), transport_(transport), seconds_(seconds) {
    watchdog_.arm(std::move(transport), seconds);
  }
  ~ArmedReply() { (void)finish(); }
  ArmedReply(const ArmedReply&) = delete;
  ArmedReply& operator=(const ArmedReply&) = delete;

  // Stops the clock while the host itself works (a host call it services
  // may wait on a person's approval); rearm() starts it afresh after.
  // Returns whether the bound had already passed (as finish() does).
  bool pause() {
    if (armed_ && watchdog_.disarm()) {
      armed_ = false;
      fired_ = true;
    }
    return fired_;
  }
  void rearm() {
    if (armed_) watchdog_.arm(transport_, seconds_);
  }
  bool finish() {
    if (!armed_) return fired_;
    armed_ = false;
    fired_ = watchdog_.disarm();
    return fired_;
  }

 private:
  ReplyWatchdog& watchdog_;
  std::shared_ptr<Transport> transport_;
  double seconds_;
  bool armed_ = true;
  bool fired_ = false;
};

}  // namespace o4s::kernel
