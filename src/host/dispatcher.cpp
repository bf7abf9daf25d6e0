#include "host/dispatcher.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "base/ascii.h"
#include "host/audit_story.h"
#include "host/egress.h"
#include "host/host_methods.h"
#include "host/permission_gate.h"
#include "host/precheck.h"
#include "host/web_methods.h"

namespace o4s::host {

namespace {

namespace fs = std::filesystem;

constexpr int kErrorKindBase = 1000;

std::string lower_trimmed(std::string text) {
  auto first = text.find_first_not_of(" \t\r\n");
  auto last = text.find_last_not_of(" \t\r\n");
  text = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  return ascii::lowered(text);
}

std::vector<std::string> allowed_roots(const HostSettings& settings) {
  std::vector<std::string> roots;
  std::stringstream entries(settings.bash_allowed_roots);
  std::string entry;
  while (std::getline(entries, entry, ':')) {
    if (entry.find_first_not_of(" \t") != std::string::npos) roots.push_back(entry);
  }
  return roots;
}

bool is_soft_failure(const Json& result) {
  return result.is_object() && result.size() == 1 && result.contains("error");
}

// Secret-file pre-gate (§3 step 6.3): the target path's basename.
std::optional<std::string> secret_gate_target(const HostMethod& row, const Json& args,
                                              const std::string& workspace) {
  if (!row.secret_path_gate || args.empty() || !args[0].is_object()) return std::nullopt;
  const Json& spec = args[0];
  auto path = spec.find("path");
  if (path == spec.end() || !path->is_string()) return std::nullopt;
  std::string target = path->get<std::string>();
  if (!workspace.empty() && target.rfind(workspace + "/", 0) == 0) {
    target = target.substr(workspace.size() + 1);
  }
  if (is_secret_basename(fs::path(target).filename().string())) return target;
  return std::nullopt;
}

}  // namespace

Error handler_error(HandlerErrorKind kind, std::string message) {
  Error error = make_error(ErrorCode::kInvalidArgument, std::move(message));
  error.sys_errno = kErrorKindBase + static_cast<int>(kind);
  return error;
}

HandlerErrorKind handler_error_kind(const Error& error) {
  if (error.sys_errno == ENOENT) return HandlerErrorKind::kFileNotFound;
  int kind = error.sys_errno - kErrorKindBase;
  if (kind >= 0 && kind <= static_cast<int>(HandlerErrorKind::kRuntime)) {
    return static_cast<HandlerErrorKind>(kind);
  }
  return error.code == ErrorCode::kInvalidArgument ? HandlerErrorKind::kValue
                                                   : HandlerErrorKind::kRuntime;
}

Json decode_args(const Json& args) {
  if (!args.is_array()) return Json::array();
  Json decoded = Json::array();
  for (const Json& arg : args) {
    if (!arg.is_object()) {
      decoded.push_back(arg);
      continue;
    }
    Json snake = Json::object();
    for (const auto& [key, value] : arg.items()) {
      std::string name;
      for (char c : key) {
        if (ascii::is_upper(c)) {
          name.push_back('_');
          name.push_back(ascii::to_lower(c));
        } else {
          name.push_back(c);
        }
      }
      snake[name] = value;
    }
    decoded.push_back(std::move(snake));
  }
  return decoded;
}

HostDispatcher::HostDispatcher(DispatcherConfig config) : config_(std::move(config)) {}

void HostDispatcher::set_workspace(std::optional<std::string> workspace) {
  std::lock_guard lock(workspace_mutex_);
  config_.workspace = std::move(workspace);
}

Result<std::string> HostDispatcher::workspace(const std::optional<std::string>& frame_id) {
  std::lock_guard lock(workspace_mutex_);
  std::string path = config_.workspace
                         ? *config_.workspace
                         : config_.data_dir + "/agent-workspaces/" + frame_id.value_or("default");
  std::error_code ec;
  fs::create_directories(path, ec);
  fs::path resolved = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) return system_error("workspace " + path, ec.value());
  return resolved.string();
}

Json HostDispatcher::authorize_bash(const Json& spec, const CallContext& context) {
  auto workspace_path = workspace(context.frame_id);
  BashContext bash;
  bash.workspace = workspace_path ? workspace_path.value() : std::string();
  bash.frame_id = context.frame_id;
  bash.generation = context.bash_generation;
  bash.allowed_roots = allowed_roots(context.settings);
  bash.egress_allowlist = egress_allowlist_mode(context.settings.egress_mode);
  if (auto policy = session_egress_policy(*this, context)) {
    bash.egress_also_allowed = policy->extra_domains;
    bash.egress_also_allowed.insert(bash.egress_also_allowed.end(), policy->session_domains.begin(),
                                    policy->session_domains.end());
  }
  return bash_.authorize(spec, bash);
}

Json HostDispatcher::consume_bash(const Json& spec, const std::optional<std::string>& generation) {
  return bash_.consume(spec, generation);
}

Json HostDispatcher::record_bash(const Json& spec, const std::optional<std::string>& generation) {
  return bash_.record_result(
      spec,
      [store = config_.store](const store::HostCallRecord& row) {
        (void)store->log_host_call(row);
      },
      generation);
}

namespace {

// The audit row's fields before the call runs (spec §7.4), as the table
// declares them.
store::HostCallRecord audit_row(const HostMethod& row, const Json& decoded,
                                const CallContext& context) {
  store::HostCallRecord record;
  record.method = std::string(row.name);
  record.args = decoded;
  record.frame_id = context.frame_id;
  record.side_effect_class = std::string(row.side_effect_class);
  record.resource_keys = {"host:" + record.method};
  record.summary = call_summary(record.method, decoded);
  if (row.keyed_by_command && !decoded.empty() && decoded[0].is_object() &&
      decoded[0].value("command_sha256", Json()).is_string()) {
    // The key the result's row carries too ("bash", bash_capability.cpp):
    // a reader joins the decision to the exit code through it.
    record.resource_keys = {"command-sha256:" + decoded[0]["command_sha256"].get<std::string>()};
  }
  const Json& action = context.action_context;
  if (action.is_object()) {
    if (auto it = action.find("action_group_id"); it != action.end() && it->is_string()) {
      record.action_group_id = it->get<std::string>();
    }
    if (auto it = action.find("action_id"); it != action.end() && it->is_string()) {
      record.action_id = it->get<std::string>();
    }
  }
  return record;
}

Json permission_denied(const std::string& why) {
  return Json{
      {"error", "Permission denied: " + (why.empty() ? std::string("denied by user") : why)}};
}

}  // namespace

Result<Json> HostDispatcher::call(const std::string& method, const Json& args,
                                  const CallContext& context) {
  const HostMethod* row = find_host_method(method);
  // Before auditing: a call the table refuses leaves no row.
  if (auto refused = refusal(row, method, args)) {
    return handler_error(HandlerErrorKind::kValue, std::move(*refused));
  }
  Json decoded = decode_args(args);
  store::HostCallRecord record = audit_row(*row, decoded, context);
  Result<Json> outcome = gated_call(*row, decoded, context, record);
  if (outcome) {
    record.ok = !is_soft_failure(outcome.value());
    record.result = outcome.value();
  } else {
    record.ok = false;
  }
  record.outcome = call_outcome(method, outcome);
  // The audit row is written whatever happened; an audit failure must not
  // turn a completed action into an error the cell would retry.
  (void)config_.store->log_host_call(record);
  return outcome;
}

// The secret-file pre-gate, then the permission gate, then the handler.
Result<Json> HostDispatcher::gated_call(const HostMethod& row, const Json& decoded,
                                        const CallContext& context, store::HostCallRecord& record) {
  auto workspace_path = workspace(context.frame_id);
  std::string workspace_text = workspace_path ? workspace_path.value() : std::string();
  if (auto secret = secret_gate_target(row, decoded, workspace_text)) {
    record.decided_by = "secret-file gate";
    return Json{
        {"error",
         "Permission denied: access to secret files (e.g. .env / keys) is blocked: " + *secret}};
  }
  if (row.before_gate != nullptr) {
    if (auto answered = row.before_gate(*this, decoded, context)) return std::move(*answered);
  }
  if (!row.gate.empty()) {
    const std::string method(row.name);
    const std::string target = permission_target(method, decoded);
    GateVerdict verdict = gate(
        *config_.store, context.frame_id, std::string(row.gate), target, context.action_context,
        lower_trimmed(context.settings.unattended_approval), context.approver,
        permission_target_verbatim(method, decoded, target), permission_reason(decoded));
    record.permission_decision_id = verdict.decision_id;
    record.decided_by = verdict.decided_by;
    if (!verdict.allow) {
      Json denied = permission_denied(verdict.message);
      if (row.refusal_hint != nullptr && verdict.decided_by == "unattended") {
        denied["error"] =
            denied["error"].get<std::string>() + row.refusal_hint(decoded, verdict.message);
      }
      return denied;
    }
    CallContext decided = context;
    decided.permission_decision_id = verdict.decision_id;
    decided.decided_by = verdict.decided_by;
    return row.handler(*this, decoded, decided);
  }
  return row.handler(*this, decoded, context);
}

}  // namespace o4s::host
