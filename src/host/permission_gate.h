// The permission gate in front of gated host methods (spec host.md §4.1,
// §4.4, §4.5): resolve the standing rules; "ask" goes to the interactive
// approver when the embedder attached one, else resolves by the unattended
// policy; either way it is recorded as a durable request.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "host/approval_text.h"
#include "store/store.h"

namespace o4s::host {

struct GateVerdict {
  bool allow = false;
  std::string message;  // why not, when refused
  std::optional<std::string> decision_id;
  // Who decided, for the audit log: "rule" (a standing rule), "user" (an
  // interactive answer), "unattended" (OPENAI4S_UNATTENDED_APPROVAL), or
  // "store" (the decision could not be read or recorded: refused).
  std::string decided_by = "rule";
};

// The permission tool for a method ("bash" for authorize_bash), or nullopt
// when the method is not gated.
std::optional<std::string> gated_tool(const std::string& method);
// The string the rule patterns are matched against (§4.1 table). Whole:
// a bash command is redacted but never cut, so a rule made from it cannot
// match a different command that shares its first characters.
std::string permission_target(const std::string& method, const nlohmann::json& decoded_args);
// Whether `target` is the call's own text (false for a bash command whose
// secrets were redacted out of it).
bool permission_target_verbatim(const std::string& method, const nlohmann::json& decoded_args,
                                const std::string& target);
// The reason the call gives for itself (its spec's "reason" string, e.g.
// request_network_access(domain, reason=...)); empty when none. Shown in
// the approval prompt, never matched by rules.
std::string permission_reason(const nlohmann::json& decoded_args);

// What a person answered to an approval prompt.
enum class ApprovalAnswer {
  kDeny,
  kOnce,          // this call only
  kConversation,  // this call, and a standing allow for the same target in the conversation
  kNoChannel,     // nobody could be asked (e.g. a client without stdin): the unattended policy
  // A client is attached but cannot show a prompt (an MCP client without
  // elicitation): denied whatever the unattended policy, with its own reason.
  kClientCannotAsk,
};

struct ApprovalRequest {
  std::string decision_id;  // the durable request the answer resolves
  std::string tool;
  std::string target;
  std::string frame_id;  // the conversation's root frame ("" without one)
  // What every front door shows (escaped, visibly cut); when
  // text.always_offered is false an "always" answer counts as "once".
  ApprovalText text;
};

// An interactive channel (a terminal prompt, a Jupyter stdin reply). It
// blocks until answered; a channel that cannot ask answers kDeny.
using Approver = std::function<ApprovalAnswer(const ApprovalRequest&)>;

// The standing-rule pattern that matches exactly `target`: glob
// metacharacters are bracketed so "ls *.csv" allows only itself.
std::string exact_pattern(const std::string& target);

// unattended_policy: "allow" resolves an ask with no interactive channel as
// allowed; anything else denies (OPENAI4S_UNATTENDED_APPROVAL, lower-cased).
GateVerdict gate(store::Store& store, const std::optional<std::string>& frame_id,
                 const std::string& tool, const std::string& target,
                 const nlohmann::json& action_context, const std::string& unattended_policy,
                 const Approver& approver = {}, bool target_verbatim = true,
                 const std::string& reason = {});

}  // namespace o4s::host
