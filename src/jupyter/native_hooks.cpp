#include "jupyter/native_hooks.h"

namespace o4s::jupyter {

NativeKernelHooks::NativeKernelHooks(std::shared_ptr<host::HostDispatcher> dispatcher,
                                     host::HostSettings settings,
                                     std::optional<std::string> frame_id)
    : dispatcher_(std::move(dispatcher)),
      settings_(std::move(settings)),
      frame_id_(std::move(frame_id)) {}

kernel::DispatchOutcome NativeKernelHooks::dispatch(const std::string& method,
                                                    const kernel::Json& args,
                                                    const kernel::DispatchContext& context) {
  if (!dispatcher_) return kernel::NoDispatcher{};
  host::CallContext call;
  call.settings = settings_;
  call.frame_id = frame_id_;
  // The shell capability is bound to this worker generation, as the Python
  // API binds it with bind_bash_generation.
  call.bash_generation = context.authorization_generation;
  call.approver = approver_;
  auto result = dispatcher_->call(method, args, call);
  if (!result) return kernel::DispatchRaised{result.error().message};
  return std::move(result.value());
}

// No seam is ever overridden, so the manager never calls these.
Result<std::optional<kernel::Json>> NativeKernelHooks::readline_override() {
  return make_error(ErrorCode::kUnsupported, "no readline override");
}
Status NativeKernelHooks::send_override(const kernel::Json&) {
  return make_error(ErrorCode::kUnsupported, "no send override");
}
Status NativeKernelHooks::service_host_call_override(const kernel::Json&) {
  return make_error(ErrorCode::kUnsupported, "no host call override");
}

}  // namespace o4s::jupyter
