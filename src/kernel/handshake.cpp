// The attestation initialization handshake (spec kernel.md §3.5, §5.4).
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "base/random_id.h"
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"
#include "proto/limits.h"

namespace o4s::kernel {

namespace {

// Fires transport->kill() once the deadline passes unless disarmed first.
// kill() is the transport-neutral way to wake the single blocked reader: no
// second reader is ever started.
class DeadlineKiller {
 public:
  DeadlineKiller(std::shared_ptr<Transport> transport, double seconds)
      : transport_(std::move(transport)), thread_([this, seconds] {
          std::unique_lock lock(mutex_);
          auto limit = std::chrono::duration<double>(seconds);
          if (!cv_.wait_for(lock, limit, [this] { return finished_; })) {
            fired_ = true;
            lock.unlock();
            transport_->kill();
          }
        }) {}
  ~DeadlineKiller() { disarm(); }

  // Returns whether the deadline had already fired.
  bool disarm() {
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  std::shared_ptr<Transport> transport_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  bool fired_ = false;
  std::thread thread_;
};

std::string format_seconds(double seconds) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", seconds);
  return buffer;
}

}  // namespace

Status KernelManager::handshake(const std::shared_ptr<Transport>& transport, double timeout_s) {
  const std::string init_id = "initialize-" + uuid4();
  std::optional<Error> failure;
  bool succeeded = false;
  DeadlineKiller deadline(transport, timeout_s);

  Status sent = send(Json{{"type", proto::frame::kInitialize},
                          {"id", init_id},
                          {"skill_attestation_key", random_hex(32)}});
  if (!sent) {
    failure = std::move(sent).error();
  } else {
    std::size_t logs = 0;
    for (;;) {
      auto frame = readline();
      if (!frame) {
        failure = std::move(frame).error();
        break;
      }
      if (!frame->has_value() || !(*frame)->is_object()) break;
      const Json& f = **frame;
      if (proto::frame_type(f) == proto::frame::kLog) {
        if (++logs > proto::kLogFramesSkippedLimit) break;
        continue;
      }
      succeeded = proto::frame_type(f) == proto::frame::kInitialized &&
                  proto::frame_string(f, "id") == init_id;
      break;
    }
  }
  bool timed_out = deadline.disarm();
  if (succeeded && !timed_out) return {};

  if (!transport->close(true)) transport->kill();
  std::string message = "kernel worker attestation initialization failed";
  if (timed_out) message += " after " + format_seconds(timeout_s) + "s deadline";
  if (failure && !failure->cause) {
    // A native failure (EPIPE, a read error) has no foreign exception to
    // chain, so its words go into the message instead of being lost.
    message += ": " + failure->message;
  }
  Error error = make_error(ErrorCode::kHandshake, std::move(message));
  if (failure) error.cause = failure->cause;
  return error;
}

}  // namespace o4s::kernel
