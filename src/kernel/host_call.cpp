// Servicing a worker's host_call (spec kernel.md §5.6): the dispatcher's
// result is translated here, once, for every embedder.
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"

namespace o4s::kernel {

namespace {

// A dict whose only key is "error" is the soft-fail shape every host handler
// uses; an "error" key with siblings is ordinary data.
bool is_soft_failure(const Json& data) {
  return data.is_object() && data.size() == 1 && data.contains("error");
}

}  // namespace

WorkerFiles KernelManager::worker_files() const {
  WorkerFiles files;
  if (!options_.sandbox) return files;
  const sandbox::SandboxStatus status = options_.sandbox->status();
  if (status.identity && status.identity->dropped && status.identity->uid != 0) {
    files.owner = std::pair(status.identity->uid, status.identity->gid);
  }
  // The limits are the bubblewrap launcher's: without it the worker has none.
  if (status.backend == "bubblewrap") {
    files.size_limit = options_.sandbox->settings().limits.file_size_bytes;
  }
  return files;
}

Status KernelManager::native_service_host_call(const Json& frame) {
  Json call_id = frame.is_object() && frame.contains("id") ? frame["id"] : Json();
  std::string method = proto::frame_string(frame, "method");
  Json args = frame.is_object() && frame.contains("args") && !frame["args"].is_null()
                  ? frame["args"]
                  : Json::array();

  // Interrupts counted from here on are this call's (interrupt() never
  // waits for it: it is delivered from another thread while we dispatch).
  const std::uint64_t seen = interrupts_.load();
  DispatchContext context{authorization_generation(),
                          [this, seen] { return interrupts_.load() != seen; }, worker_files()};
  DispatchOutcome outcome =
      hooks_ ? hooks_->dispatch(method, args, context) : DispatchOutcome(NoDispatcher{});
  Json reply{{"type", proto::frame::kHostResponse}, {"id", call_id}};
  if (std::holds_alternative<NoDispatcher>(outcome)) {
    reply["error"] = "no host dispatcher configured";
  } else if (auto* raised = std::get_if<DispatchRaised>(&outcome)) {
    reply["error"] = raised->message;
  } else {
    Json& data = std::get<Json>(outcome);
    if (is_soft_failure(data)) {
      reply["error"] = data["error"];
    } else {
      reply["data"] = std::move(data);
    }
  }
  // Unanswered past the backlog, as input requests: a cell writing raw
  // calls and never reading would otherwise block host and worker on each
  // other, and no interrupt could end it. Its own wait stays interruptible.
  if (replies_unread("host calls")) return {};
  return send(reply);
}

}  // namespace o4s::kernel
