// The kernel manager's embedder hooks with no Python in them: host calls go
// straight to the C++ HostDispatcher (permission gate, handlers, audit in
// the SQLite store), and no seam is ever overridden.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "host/dispatcher.h"
#include "kernel/kernel_hooks.h"

namespace o4s::jupyter {

class NativeKernelHooks : public kernel::KernelHooks {
 public:
  // `dispatcher` may be null: the cell then gets "no dispatcher" errors.
  NativeKernelHooks(std::shared_ptr<host::HostDispatcher> dispatcher, host::HostSettings settings,
                    std::optional<std::string> frame_id);

  kernel::DispatchOutcome dispatch(const std::string& method, const kernel::Json& args,
                                   const kernel::DispatchContext& context) override;
  bool overridden(Seam) const override { return false; }
  // Who answers "ask" permissions for the cells that follow (the client's
  // stdin, while a cell allows it); empty = the unattended policy.
  void set_approver(host::Approver approver) { approver_ = std::move(approver); }
  Result<std::optional<kernel::Json>> readline_override() override;
  Status send_override(const kernel::Json& frame) override;
  Status service_host_call_override(const kernel::Json& frame) override;

 private:
  std::shared_ptr<host::HostDispatcher> dispatcher_;
  host::HostSettings settings_;
  std::optional<std::string> frame_id_;
  host::Approver approver_;  // set and used on the execute thread only
};

}  // namespace o4s::jupyter
