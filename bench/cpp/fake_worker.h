// An in-memory worker for benchmarking the manager alone: it answers the
// handshake, turns an execute whose code is a decimal N into N sequential
// `ping` host calls, and ends each cell with a minimal response. It does as
// little work as possible so the numbers are the manager's, not the fake's.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kernel/kernel_hooks.h"
#include "kernel/transport.h"

namespace o4s::bench {

class FakeWorkerTransport : public kernel::Transport {
 public:
  FakeWorkerTransport();

  Status write_line(std::string_view line) override;
  Result<std::optional<std::string>> read_line() override;
  bool alive() override;
  bool interrupt() override { return false; }
  void kill() override;
  Status close(bool graceful) override;
  std::optional<pid_t> local_pid() override { return std::nullopt; }
  std::optional<kernel::StderrSnapshot> stderr_snapshot() override { return std::nullopt; }

 private:
  void emit_next_locked();

  std::mutex mutex_;
  std::deque<std::string> outbox_;
  long long calls_left_ = 0;
  bool closed_ = false;
  // Encoded once: the manager echoes a host_call's id without checking it
  // and makes no id check on `response`, so constant lines are faithful.
  const std::string host_call_line_;
  const std::string response_line_;
};

class FakeWorkerFactory : public kernel::TransportFactory {
 public:
  Result<std::shared_ptr<kernel::Transport>> make() override;
};

// A dispatcher that answers every method with "pong" and overrides no seam.
class PongHooks : public kernel::KernelHooks {
 public:
  kernel::DispatchOutcome dispatch(const std::string& method, const kernel::Json& args,
                                   const kernel::DispatchContext& context) override;
  bool overridden(Seam) const override { return false; }
  Result<std::optional<kernel::Json>> readline_override() override;
  Status send_override(const kernel::Json& frame) override;
  Status service_host_call_override(const kernel::Json& frame) override;
};

}  // namespace o4s::bench
