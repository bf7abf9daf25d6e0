// An in-memory Transport for KernelManager unit tests: scripted worker lines,
// recorded host frames, and a reader that can block until kill() the way a
// pipe read blocks until the worker dies.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kernel/kernel_hooks.h"
#include "kernel/transport.h"
#include "proto/frame_codec.h"

namespace o4s::testing {

using proto::Json;

class FakeTransport final : public kernel::Transport {
 public:
  // What read_line does once the script runs dry.
  enum class WhenEmpty { kEndOfStream, kBlock };
  // Called (on the writer's thread, outside the transport's lock) for every
  // frame the host writes; it may push the worker's answer.
  using Responder = std::function<void(const Json& frame, FakeTransport& self)>;

  FakeTransport() = default;

  // Script the worker's side. Lines are taken as given (add the '\n').
  void push_line(std::string line);
  void push_frame(const Json& frame);
  void push_error(Error error);
  void push_end_of_stream();

  void set_when_empty(WhenEmpty mode);
  // Answer every `initialize` frame with a matching `initialized` (default on).
  void set_auto_initialize(bool on);
  void set_responder(Responder responder);
  void fail_writes(std::optional<Error> error);
  void set_interrupt_result(bool delivered);
  void set_stderr(std::optional<kernel::StderrSnapshot> snapshot);
  void set_alive(bool alive);
  // Like a remote transport, alive() latches false once read_line has
  // returned end of stream. A dying local process closes its pipes a moment
  // before it is reported as exited: model that by answering alive() true
  // for `polls` more calls after end of stream.
  void set_exit_lag(int polls);
  // What exit_status() reports (how a local worker ended).
  void set_exit_status(std::optional<int> status);

  std::vector<std::string> written_lines() const;
  std::vector<Json> written_frames() const;
  std::vector<Json> written_frames_of_type(std::string_view type) const;
  // Waits until a frame of `type` has been written; false on timeout.
  bool wait_for_frame(std::string_view type, std::chrono::milliseconds timeout) const;
  // Waits until a reader is blocked in read_line with nothing to return.
  bool wait_for_blocked_reader(std::chrono::milliseconds timeout) const;

  int kill_calls() const;
  int close_calls() const;
  std::optional<bool> last_close_graceful() const;

  // Transport
  Status write_line(std::string_view line) override;
  Result<std::optional<std::string>> read_line() override;
  bool alive() override;
  bool interrupt() override;
  void kill() override;
  Status close(bool graceful) override;
  std::optional<pid_t> local_pid() override { return std::nullopt; }
  std::optional<kernel::StderrSnapshot> stderr_snapshot() override;
  std::optional<int> exit_status() override;

 private:
  struct EndOfStream {};
  using Item = std::variant<std::string, Error, EndOfStream>;

  void push(Item item);
  // The id of the newest execute frame written; call with mutex_ held.
  std::string last_execute_id_locked() const;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::deque<Item> script_;
  WhenEmpty when_empty_ = WhenEmpty::kEndOfStream;
  bool auto_initialize_ = true;
  Responder responder_;
  std::optional<Error> write_error_;
  bool interrupt_result_ = true;
  std::optional<kernel::StderrSnapshot> stderr_ = kernel::StderrSnapshot{};
  bool alive_ = true;
  bool end_of_stream_returned_ = false;
  int exit_lag_ = 0;
  std::optional<int> exit_status_;
  bool killed_ = false;
  bool closed_ = false;
  int blocked_readers_ = 0;
  int kill_calls_ = 0;
  int close_calls_ = 0;
  std::optional<bool> last_close_graceful_;
  std::vector<std::string> written_;
};

// Hands out one prepared transport (or an error); counts the calls.
class FakeTransportFactory final : public kernel::TransportFactory {
 public:
  explicit FakeTransportFactory(std::shared_ptr<kernel::Transport> transport)
      : transport_(std::move(transport)) {}
  explicit FakeTransportFactory(Error error) : error_(std::move(error)) {}

  Result<std::shared_ptr<kernel::Transport>> make() override;
  int calls() const { return calls_; }

 private:
  std::shared_ptr<kernel::Transport> transport_;
  std::optional<Error> error_;
  int calls_ = 0;
};

}  // namespace o4s::testing
