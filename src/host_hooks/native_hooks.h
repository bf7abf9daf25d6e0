// The kernel manager's embedder hooks with no Python in them (issue 25
// point 3): a host call goes straight to the C++ HostDispatcher (the
// method table, the permission gate, the handler, the audit row in the
// SQLite store) and no seam is ever overridden. The Jupyter kernel and the
// MCP server use NativeKernelHooks; the Python binding calls dispatch()
// for a kernel whose dispatcher is the stock one.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "host/dispatcher.h"
#include "kernel/kernel_hooks.h"

namespace o4s::host_hooks {

// One host call through `dispatcher`, its result in the manager's terms.
// The shell capability is bound to the calling worker's generation.
kernel::DispatchOutcome dispatch(host::HostDispatcher& dispatcher, const std::string& method,
                                 const kernel::Json& args, const kernel::DispatchContext& context,
                                 host::CallContext call);

class NativeKernelHooks final : public kernel::KernelHooks {
 public:
  // Told of every artifact a cell saves (the MCP server links it to the cell).
  using ArtifactObserver = std::function<void(const kernel::Json& saved)>;

  // `dispatcher` may be null: the cell then gets "no dispatcher" errors.
  NativeKernelHooks(std::shared_ptr<host::HostDispatcher> dispatcher, host::HostSettings settings,
                    std::optional<std::string> frame_id);

  kernel::DispatchOutcome dispatch(const std::string& method, const kernel::Json& args,
                                   const kernel::DispatchContext& context) override;
  bool overridden(Seam) const override { return false; }
  Result<std::optional<kernel::Json>> readline_override() override;
  Status send_override(const kernel::Json& frame) override;
  Status service_host_call_override(const kernel::Json& frame) override;
  // Whatever the host granted the ended worker must not outlive it.
  void generation_ended(const std::string& generation) override;

  // For the cells that follow (until set again): who answers "ask"
  // permissions (empty: the unattended policy), who hears of saved artifacts.
  void set_cell(host::Approver approver, ArtifactObserver observer = {});
  // The kernel's background jobs (host.exec_background); stopped when its
  // worker's generation ends. Null (the default, and a job's own worker):
  // the kernel cannot start any.
  void set_background(std::shared_ptr<host::BackgroundJobs> background);
  // Its background jobs' workers starting or alive (0 without jobs).
  std::size_t running_jobs();

 private:
  std::shared_ptr<host::HostDispatcher> dispatcher_;
  host::HostSettings settings_;
  std::optional<std::string> frame_id_;
  std::mutex mutex_;  // guards the two below: set by the caller, read on the execute thread
  host::Approver approver_;
  ArtifactObserver observer_;
  std::shared_ptr<host::BackgroundJobs> background_;
};

}  // namespace o4s::host_hooks
