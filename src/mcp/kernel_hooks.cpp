#include "mcp/kernel_hooks.h"

namespace o4s::mcp {

McpKernelHooks::McpKernelHooks(std::shared_ptr<host::HostDispatcher> dispatcher,
                               host::HostSettings settings, std::string frame_id)
    : dispatcher_(std::move(dispatcher)),
      settings_(std::move(settings)),
      frame_id_(std::move(frame_id)) {}

void McpKernelHooks::set_cell(host::Approver approver, ArtifactObserver observer) {
  std::lock_guard lock(mutex_);
  approver_ = std::move(approver);
  observer_ = std::move(observer);
}

kernel::DispatchOutcome McpKernelHooks::dispatch(const std::string& method,
                                                 const kernel::Json& args,
                                                 const kernel::DispatchContext& context) {
  host::CallContext call;
  ArtifactObserver observer;
  {
    std::lock_guard lock(mutex_);
    call.approver = approver_;
    observer = observer_;
  }
  call.settings = settings_;
  call.frame_id = frame_id_;
  // The shell capability is bound to this worker generation.
  call.bash_generation = context.authorization_generation;
  auto result = dispatcher_->call(method, args, call);
  if (!result) return kernel::DispatchRaised{result.error().message};
  if (method == "save_artifact" && observer && result.value().is_object() &&
      !result.value().contains("error")) {
    observer(result.value());
  }
  return std::move(result.value());
}

void McpKernelHooks::generation_ended(const std::string& generation) {
  dispatcher_->revoke_bash_generation(generation);
}

// No seam is ever overridden, so the manager never calls these.
Result<std::optional<kernel::Json>> McpKernelHooks::readline_override() {
  return make_error(ErrorCode::kUnsupported, "no readline override");
}
Status McpKernelHooks::send_override(const kernel::Json&) {
  return make_error(ErrorCode::kUnsupported, "no send override");
}
Status McpKernelHooks::service_host_call_override(const kernel::Json&) {
  return make_error(ErrorCode::kUnsupported, "no host call override");
}

}  // namespace o4s::mcp
