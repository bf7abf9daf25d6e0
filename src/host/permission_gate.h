// The permission gate in front of gated host methods (spec host.md §4.1,
// §4.4, §4.5): resolve the standing rules; "ask" with no interactive channel
// resolves by the unattended policy, recorded as a durable request.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/store.h"

namespace o4s::host {

struct GateVerdict {
  bool allow = false;
  std::string message;  // why not, when refused
  std::optional<std::string> decision_id;
};

// The permission tool for a method ("bash" for authorize_bash), or nullopt
// when the method is not gated.
std::optional<std::string> gated_tool(const std::string& method);
// The string the rule patterns are matched against (§4.1 table).
std::string permission_target(const std::string& method, const nlohmann::json& decoded_args);

// A person's answer to an "ask", from an interactive channel (the Jupyter
// kernel's stdin prompt). kNoChannel: nobody could be asked.
enum class Approval { kNoChannel, kOnce, kAlways, kDeny };
using Approver = std::function<Approval(const std::string& tool, const std::string& target)>;

// unattended_policy: "allow" resolves an ask with no interactive channel as
// allowed; anything else denies (OPENAI4S_UNATTENDED_APPROVAL, lower-cased).
// With an approver, the person's answer decides instead; "always" also
// records a conversation rule allowing exactly this target.
GateVerdict gate(store::Store& store, const std::optional<std::string>& frame_id,
                 const std::string& tool, const std::string& target,
                 const nlohmann::json& action_context, const std::string& unattended_policy,
                 const Approver& approver = {});

}  // namespace o4s::host
