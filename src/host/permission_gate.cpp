#include "host/permission_gate.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

#include "host/host_methods.h"
#include "host/permission_policy.h"
#include "host/precheck.h"

namespace o4s::host {

namespace {

using Json = nlohmann::json;

std::string string_field(const Json& spec, const char* key) {
  auto it = spec.find(key);
  return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string url_host(const std::string& url) {
  auto scheme = url.find("://");
  std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  if (auto colon = rest.find(':'); colon != std::string::npos) rest = rest.substr(0, colon);
  if (rest.rfind("www.", 0) == 0) rest = rest.substr(4);
  return rest.empty() ? url : rest;
}

}  // namespace

std::optional<std::string> gated_tool(const std::string& method) {
  const HostMethod* row = find_host_method(method);
  if (row == nullptr || row->gate.empty()) return std::nullopt;
  return std::string(row->gate);
}

namespace {

std::string first_string_or(const Json& args, const Json& spec, const char* key) {
  if (!args.empty() && args[0].is_string()) {
    std::string first = args[0].get<std::string>();
    if (!first.empty()) return first;
  }
  return string_field(spec, key);
}

// A list's strings joined by spaces (a lone string as it is).
std::string joined_strings(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  std::string out;
  if (!value.is_array()) return out;
  for (const Json& item : value) {
    if (!item.is_string()) continue;
    out += (out.empty() ? "" : " ") + item.get<std::string>();
  }
  return out;
}

std::string either(std::string first, const Json& spec, const char* key) {
  return first.empty() ? string_field(spec, key) : first;
}

}  // namespace

std::string permission_target(const std::string& method, const Json& args) {
  const HostMethod* row = find_host_method(method);
  if (row == nullptr) return {};
  Json spec = !args.empty() && args[0].is_object() ? args[0] : Json::object();
  switch (row->target) {
    case TargetKind::kNone:
      return {};
    case TargetKind::kCommand:
      return redact_secrets(string_field(spec, "command"), std::string::npos);
    case TargetKind::kPath:
      return string_field(spec, "path");
    case TargetKind::kPathOrDot: {
      std::string path = string_field(spec, "path");
      return path.empty() ? "." : path;
    }
    case TargetKind::kFilenameOrPath:
      return either(string_field(spec, "filename"), spec, "path");
    case TargetKind::kFilenameOrVersion:
      return either(string_field(spec, "filename"), spec, "version_id");
    case TargetKind::kUrlHost:
      return url_host(string_field(spec, "url"));
    case TargetKind::kQuery:
      return string_field(spec, "query");
    case TargetKind::kPattern:
      return string_field(spec, "pattern");
    case TargetKind::kCode:
      return string_field(spec, "code");
    case TargetKind::kName:
      return string_field(spec, "name");
    case TargetKind::kFirstStringOrName:
      return first_string_or(args, spec, "name");
    case TargetKind::kFirstStringOrDomain:
      return first_string_or(args, spec, "domain");
    case TargetKind::kServerTool:
      return string_field(spec, "server") + "/" + string_field(spec, "tool");
    case TargetKind::kPackagesOrName:
      return either(joined_strings(spec.value("packages", Json())), spec, "name");
  }
  return {};
}

bool permission_target_verbatim(const std::string& method, const Json& args,
                                const std::string& target) {
  const HostMethod* row = find_host_method(method);
  if (row == nullptr || row->target != TargetKind::kCommand) return true;
  Json spec = !args.empty() && args[0].is_object() ? args[0] : Json::object();
  return target == string_field(spec, "command");
}

std::string permission_reason(const Json& args) {
  Json spec = !args.empty() && args[0].is_object() ? args[0] : Json::object();
  return string_field(spec, "reason");
}

std::string exact_pattern(const std::string& target) {
  std::string pattern;
  pattern.reserve(target.size());
  for (char c : target) {
    if (c == '*' || c == '?' || c == '[') {
      pattern += '[';
      pattern += c;
      pattern += ']';
    } else {
      pattern += c;
    }
  }
  return pattern;
}

namespace {

store::PermissionResolution unattended_resolution(const std::string& unattended_policy,
                                                  ApprovalAnswer answer) {
  store::PermissionResolution resolution;
  resolution.resolution_context = "unattended";
  if (answer == ApprovalAnswer::kClientCannotAsk) {
    // The unattended policy is the front door's, not this client's: an
    // MCP server ignores it, so naming it would send the user astray.
    resolution.state = "denied";
    resolution.message = "approval required but this client cannot show approval prompts";
  } else if (unattended_policy == "allow") {
    resolution.state = "allowed";
    resolution.scope = "once";
    resolution.message = "allowed by explicit unattended approval policy";
  } else {
    resolution.state = "denied";
    resolution.message = "approval required but no interactive channel is attached";
  }
  return resolution;
}

store::PermissionResolution interactive_resolution(ApprovalAnswer answer,
                                                   const std::string& target) {
  store::PermissionResolution resolution;
  resolution.resolution_context = "live_thread";  // the spec's name for a live answer
  if (answer == ApprovalAnswer::kDeny) {
    resolution.state = "denied";
    resolution.message = "denied by user";
    return resolution;
  }
  resolution.state = "allowed";
  resolution.scope = answer == ApprovalAnswer::kConversation ? "conversation" : "once";
  if (answer == ApprovalAnswer::kConversation) resolution.pattern = exact_pattern(target);
  resolution.message = "allowed by user";
  return resolution;
}

}  // namespace

namespace {

// The conversation (root frame) and project a call's permission rules and
// requests belong to.
struct GateScope {
  std::string root;
  std::string project = "default";
};

GateScope scope_of(store::Store& store, const std::optional<std::string>& frame_id) {
  GateScope scope{frame_id.value_or(""), "default"};
  if (auto resolved = store.resolve_frame_scope(frame_id)) {
    scope.root = resolved->root_frame_id;
    scope.project = resolved->project_id;
  }
  return scope;
}

// The durable request a person is asked about (spec host.md §4.2).
store::PermissionRequest permission_request(const GateScope& scope,
                                            const std::optional<std::string>& frame_id,
                                            const std::string& tool, const std::string& target,
                                            const ApprovalText& text, const Json& action_context) {
  store::PermissionRequest request;
  if (!scope.root.empty()) request.root_frame_id = scope.root;
  request.frame_id = frame_id;
  request.project_id = scope.project;
  request.tool = tool;
  // The row keeps a bounded target; its sha256 names the whole one.
  request.target = bounded_target(target);
  Json scopes =
      text.always_offered ? Json{"once", "conversation", "project", "global"} : Json{"once"};
  request.payload = Json{{"type", "await_permission"},   {"tool", tool},
                         {"target", request.target},     {"target_length", text.length},
                         {"target_sha256", text.sha256}, {"frame_id", scope.root},
                         {"scopes", std::move(scopes)}};
  if (!action_context.is_object()) return request;
  for (const char* key : {"action_group_id", "action_id", "tool_call_id"}) {
    auto it = action_context.find(key);
    if (it == action_context.end() || !it->is_string()) continue;
    std::string value = it->get<std::string>();
    if (std::string_view(key) == "action_group_id") request.action_group_id = value;
    if (std::string_view(key) == "action_id") request.action_id = value;
    if (std::string_view(key) == "tool_call_id") request.tool_call_id = value;
  }
  return request;
}

// Records the answer (or the unattended policy's) to a recorded request.
GateVerdict settle(store::Store& store, const GateScope& scope, const std::string& decision_id,
                   const std::string& tool, const std::string& target, ApprovalAnswer answer,
                   bool always_offered, const std::string& unattended_policy) {
  // A session-wide answer needs a conversation to scope its rule to, and a
  // target the person saw whole and verbatim; otherwise it is honoured for
  // this call only, whatever the front door offered.
  if (answer == ApprovalAnswer::kConversation && (scope.root.empty() || !always_offered)) {
    answer = ApprovalAnswer::kOnce;
  }
  bool asked = answer != ApprovalAnswer::kNoChannel && answer != ApprovalAnswer::kClientCannotAsk;
  store::PermissionResolution resolution = asked ? interactive_resolution(answer, target)
                                                 : unattended_resolution(unattended_policy, answer);
  bool allow = resolution.state == "allowed";
  std::string decided_by = asked ? "user" : "unattended";
  if (!store.resolve_permission_request(decision_id, resolution)) {
    return {false, "approval persistence failed closed", decision_id, "store"};
  }
  if (allow && answer == ApprovalAnswer::kConversation &&
      !store.set_permission_rule("conversation", scope.root, tool, *resolution.pattern, "allow")) {
    // The call itself was approved and recorded; only the standing rule is
    // missing, so the next call asks again rather than being refused.
    return {true, {}, decision_id, decided_by};
  }
  return {allow, allow ? std::string() : *resolution.message, decision_id, decided_by};
}

}  // namespace

GateVerdict gate(store::Store& store, const std::optional<std::string>& frame_id,
                 const std::string& tool, const std::string& target, const Json& action_context,
                 const std::string& unattended_policy, const Approver& approver,
                 bool target_verbatim, const std::string& reason) {
  GateScope scope = scope_of(store, frame_id);
  auto rules =
      store.rules_for(scope.root.empty() ? std::nullopt : std::optional(scope.root), scope.project);
  if (!rules) {
    // The reference treats an unreadable rule table as "ask", which an
    // unattended allow policy would then grant even over a standing deny.
    // A security decision that cannot be read fails closed instead.
    return {false, "permission rules could not be read: " + rules.error().message, std::nullopt,
            "store"};
  }
  Decision decision = resolve_permission(rules.value(), tool, target);
  if (decision == Decision::kAllow) return {true, {}, std::nullopt, "rule"};
  if (decision == Decision::kDeny) {
    return {false, "blocked by a standing 'deny' permission rule", std::nullopt, "rule"};
  }
  ApprovalText text = render_approval(tool, target, target_verbatim, reason);
  auto created = store.create_permission_request(
      permission_request(scope, frame_id, tool, target, text, action_context));
  if (!created) {
    return {false, "approval required but its durable request could not be recorded", std::nullopt,
            "store"};
  }
  const std::string& decision_id = created.value();
  const bool always_offered = text.always_offered;
  ApprovalAnswer answer = ApprovalAnswer::kNoChannel;
  if (approver) {
    answer = approver(ApprovalRequest{decision_id, tool, target, scope.root, std::move(text)});
  }
  return settle(store, scope, decision_id, tool, target, answer, always_offered, unattended_policy);
}

}  // namespace o4s::host
