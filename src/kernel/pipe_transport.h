// The local transport: a worker spawned by the supervisor thread with a
// protocol pipe pair and a drained stderr.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "base/unique_fd.h"
#include "kernel/transport.h"
#include "proc/child_process.h"
#include "proc/spawn.h"
#include "proc/stderr_tail.h"
#include "proto/line_reader.h"

namespace o4s::kernel {

class PipeTransport final : public Transport {
 public:
  // How long the reader polls for the answer to a frame just written before
  // it sleeps: covers a short cell or host-call answer, costs at most this
  // much CPU per frame sent otherwise.
  static constexpr std::chrono::microseconds kAnswerSpin{150};

  static Result<std::unique_ptr<PipeTransport>> start(const proc::SpawnRequest& request);
  ~PipeTransport() override;

  Status write_line(std::string_view line) override;
  Result<std::optional<std::string>> read_line() override;
  bool alive() override;
  bool interrupt() override { return false; }  // signals are the manager's job
  void kill() override;
  // Graceful: shutdown frame, 3 s; SIGINT, 2 s; group kill, 2 s. Either way
  // the protocol input closes and leftovers of the group are killed.
  Status close(bool graceful) override;
  std::optional<pid_t> local_pid() override { return child_->pid(); }
  std::optional<int> exit_status() override { return child_->poll(); }
  std::optional<StderrSnapshot> stderr_snapshot() override;
  std::size_t dropped_lines() const override;
  void set_wake(int fd, std::function<void()> on_wake) override;
  std::optional<std::size_t> unread_input_bytes() override;
  bool offer_line(std::string_view line,
                  std::chrono::milliseconds patience = std::chrono::milliseconds(100)) override;
  std::shared_ptr<proc::DrainTarget> log_target() override { return tail_; }

  proc::ChildProcess& child() { return *child_; }
  // What the close ladder's SIGINT rung sends. By default SIGINT to the
  // spawned process, which is the worker itself; when the worker runs
  // inside a sandbox the spawned process is the sandbox's leader, and a
  // SIGINT there would end the sandbox instead of the cell.
  // `send` returns false when it could not deliver (no pinned worker: the
  // sandbox fell back to running the worker directly); the plain SIGINT to
  // the spawned process, then the worker itself, is sent instead.
  void route_stop_signal(std::function<bool()> send) { stop_signal_ = std::move(send); }
  std::shared_ptr<proc::StderrTail> tail() const { return tail_; }

 private:
  PipeTransport(std::unique_ptr<proc::ChildProcess> child, UniqueFd stdin_write,
                UniqueFd stdout_read, std::shared_ptr<proc::StderrTail> tail);
  void close_input();
  // Best effort, never blocks: a writer stuck on a full pipe (a worker that
  // stopped reading) must not hold the kill ladder hostage.
  void offer_shutdown_frame();

  std::unique_ptr<proc::ChildProcess> child_;
  std::timed_mutex write_mutex_;
  UniqueFd stdin_;  // guarded by write_mutex_
  // Kept open until destruction: closing it under a blocked reader would let
  // the number be reused beneath that read.
  UniqueFd stdout_;
  std::mutex read_mutex_;
  proto::LineReader reader_;
  std::shared_ptr<proc::StderrTail> tail_;
  std::function<bool()> stop_signal_;
};

}  // namespace o4s::kernel
