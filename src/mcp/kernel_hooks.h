// The manager's embedder hooks for one MCP kernel: host calls go straight
// to the C++ HostDispatcher (as the Jupyter kernel's do), "ask" permissions
// go to whoever started the running cell (an elicitation), and artifacts a
// cell saves are told to that cell's execution.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "host/dispatcher.h"
#include "kernel/kernel_hooks.h"

namespace o4s::mcp {

class McpKernelHooks : public kernel::KernelHooks {
 public:
  using ArtifactObserver = std::function<void(const kernel::Json& saved)>;

  McpKernelHooks(std::shared_ptr<host::HostDispatcher> dispatcher, host::HostSettings settings,
                 std::string frame_id);

  kernel::DispatchOutcome dispatch(const std::string& method, const kernel::Json& args,
                                   const kernel::DispatchContext& context) override;
  bool overridden(Seam) const override { return false; }
  Result<std::optional<kernel::Json>> readline_override() override;
  Status send_override(const kernel::Json& frame) override;
  Status service_host_call_override(const kernel::Json& frame) override;
  void generation_ended(const std::string& generation) override;

  // For the cell about to run (and cleared after it): who answers "ask".
  void set_cell(host::Approver approver, ArtifactObserver observer);

 private:
  std::shared_ptr<host::HostDispatcher> dispatcher_;
  host::HostSettings settings_;
  std::string frame_id_;
  std::mutex mutex_;
  host::Approver approver_;
  ArtifactObserver observer_;
};

}  // namespace o4s::mcp
