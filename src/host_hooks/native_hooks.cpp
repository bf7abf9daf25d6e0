#include "host_hooks/native_hooks.h"

namespace o4s::host_hooks {

kernel::DispatchOutcome dispatch(host::HostDispatcher& dispatcher, const std::string& method,
                                 const kernel::Json& args, const kernel::DispatchContext& context,
                                 host::CallContext call) {
  call.bash_generation = context.authorization_generation;
  call.interrupted = context.interrupted;
  call.worker_owner = context.worker_files.owner;
  call.worker_file_size_limit = context.worker_files.size_limit;
  auto result = dispatcher.call(method, args, call);
  if (!result) return kernel::DispatchRaised{result.error().message};
  return std::move(result.value());
}

NativeKernelHooks::NativeKernelHooks(std::shared_ptr<host::HostDispatcher> dispatcher,
                                     host::HostSettings settings,
                                     std::optional<std::string> frame_id)
    : dispatcher_(std::move(dispatcher)),
      settings_(std::move(settings)),
      frame_id_(std::move(frame_id)) {}

void NativeKernelHooks::set_cell(host::Approver approver, ArtifactObserver observer) {
  std::lock_guard lock(mutex_);
  approver_ = std::move(approver);
  observer_ = std::move(observer);
}

void NativeKernelHooks::set_background(std::shared_ptr<host::BackgroundJobs> background) {
  std::lock_guard lock(mutex_);
  background_ = std::move(background);
}

std::size_t NativeKernelHooks::running_jobs() {
  std::lock_guard lock(mutex_);
  return background_ ? background_->running() : 0;
}

kernel::DispatchOutcome NativeKernelHooks::dispatch(const std::string& method,
                                                    const kernel::Json& args,
                                                    const kernel::DispatchContext& context) {
  if (!dispatcher_) return kernel::NoDispatcher{};
  host::CallContext call;
  ArtifactObserver observer;
  {
    std::lock_guard lock(mutex_);
    call.approver = approver_;
    call.background = background_;
    observer = observer_;
  }
  call.settings = settings_;
  call.frame_id = frame_id_;
  kernel::DispatchOutcome outcome =
      host_hooks::dispatch(*dispatcher_, method, args, context, std::move(call));
  const auto* saved = std::get_if<kernel::Json>(&outcome);
  if (method == "save_artifact" && observer && saved != nullptr && saved->is_object() &&
      !saved->contains("error")) {
    observer(*saved);
  }
  return outcome;
}

void NativeKernelHooks::generation_ended(const std::string& generation) {
  if (dispatcher_) dispatcher_->revoke_bash_generation(generation);
  std::shared_ptr<host::BackgroundJobs> background;
  {
    std::lock_guard lock(mutex_);
    background = background_;
  }
  // Restart or shutdown: no background job outlives the worker that
  // started it (the job list stays, showing them stopped).
  if (background) background->stop_all();
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

}  // namespace o4s::host_hooks
