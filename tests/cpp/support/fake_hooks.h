// A scripted KernelHooks (the embedder's dispatcher and seams) and a recording
// ChunkSink, for KernelManager unit tests.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/kernel_hooks.h"

namespace o4s::testing {

using proto::Json;

class FakeHooks final : public kernel::KernelHooks {
 public:
  struct Call {
    std::string method;
    Json args;
    std::string authorization_generation;
  };
  using Dispatcher =
      std::function<kernel::DispatchOutcome(const std::string& method, const Json& args)>;

  // Default: behaves like an embedder with no dispatcher configured.
  void set_dispatcher(Dispatcher dispatcher) { dispatcher_ = std::move(dispatcher); }
  // Every call answers `outcome`.
  void answer(kernel::DispatchOutcome outcome);

  void override_seam(Seam seam, bool on);
  std::function<Result<std::optional<Json>>()> readline_fn;
  std::function<Status(const Json&)> send_fn;
  std::function<Status(const Json&)> service_host_call_fn;

  std::vector<Call> calls() const;

  // KernelHooks
  kernel::DispatchOutcome dispatch(const std::string& method, const Json& args,
                                   const kernel::DispatchContext& context) override;
  bool overridden(Seam seam) const override;
  Result<std::optional<Json>> readline_override() override { return readline_fn(); }
  Status send_override(const Json& frame) override { return send_fn(frame); }
  Status service_host_call_override(const Json& frame) override {
    return service_host_call_fn(frame);
  }

 private:
  mutable std::mutex mutex_;
  Dispatcher dispatcher_;
  std::set<Seam> overridden_;
  std::vector<Call> calls_;
};

// Records delivered chunks; can fail from the Nth delivery on and run a
// callback per chunk (used to call interrupt() from inside execute).
class RecordingSink final : public kernel::ChunkSink {
 public:
  Status deliver(const std::string& text) override;

  std::vector<std::string> chunks;
  std::optional<std::size_t> fail_at;  // 0-based delivery index that fails
  std::function<void(const std::string&)> on_text;
};

}  // namespace o4s::testing
