#include "kernel/oom_report.h"

#include <string>

#include "sandbox/resource_limits.h"

namespace o4s::kernel {

OomWatch::OomWatch(const sandbox::KernelSandbox* sandbox)
    : sandbox_(sandbox), before_(sandbox ? sandbox->oom_kills() : std::nullopt) {}

void OomWatch::report(proto::Json& response) const {
  using proto::Json;
  if (!before_) return;
  std::optional<std::uint64_t> after = sandbox_->oom_kills();
  if (!after || *after <= *before_) return;
  const std::uint64_t kills = *after - *before_;
  // Only then: a plain cell's response keeps its exact key set.
  Json& usage = response["usage"];
  if (!usage.is_object()) usage = Json::object();
  usage["oom_kills"] = kills;
  std::string line = "openai4s: the sandbox's memory limit (" +
                     sandbox::describe_bytes(sandbox_->settings().limits.address_space_bytes) +
                     " for all its processes and tmpfs files together) was reached during this "
                     "cell: the kernel's OOM killer ended " +
                     std::to_string(kills) + (kills == 1 ? " process" : " processes") + "\n";
  Json& stderr_text = response["stderr"];
  if (!stderr_text.is_string()) stderr_text = std::string();
  std::string& text = stderr_text.get_ref<std::string&>();
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += line;
}

}  // namespace o4s::kernel
