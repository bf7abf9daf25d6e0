#include "host/dispatcher.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "base/ascii.h"
#include "host/audit_story.h"
#include "host/egress.h"
#include "host/permission_gate.h"
#include "host/precheck.h"

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

bool egress_allowlist_mode(const HostSettings& settings) {
  std::string mode = lower_trimmed(settings.egress_mode);
  return mode == "allowlist" || mode == "allow_list" || mode == "on" || mode == "1" ||
         mode == "enforce";
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
std::optional<std::string> secret_gate_target(const std::string& method, const Json& args,
                                              const std::string& workspace) {
  if (method != "read_file" && method != "write_file" && method != "edit_file" &&
      method != "save_artifact") {
    return std::nullopt;
  }
  if (args.empty() || !args[0].is_object()) return std::nullopt;
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

HostDispatcher::HostDispatcher(DispatcherConfig config) : config_(std::move(config)) {
  register_handlers();
}

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
  bash.egress_allowlist = egress_allowlist_mode(context.settings);
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

void HostDispatcher::register_handlers() {
  auto first_spec = [](const Json& args) {
    return !args.empty() && args[0].is_object() ? args[0] : Json::object();
  };
  handlers_["authorize_bash"] = [this, first_spec](const Json& args,
                                                   const CallContext& context) -> Result<Json> {
    Json spec = first_spec(args);
    if (context.authorize_override) return context.authorize_override(spec);
    return authorize_bash(spec, context);
  };
  handlers_["consume_bash_authorization"] =
      [this, first_spec](const Json& args, const CallContext& context) -> Result<Json> {
    return consume_bash(first_spec(args), context.bash_generation);
  };
  handlers_["record_bash_result"] = [this, first_spec](const Json& args,
                                                       const CallContext& context) -> Result<Json> {
    return record_bash(first_spec(args), context.bash_generation);
  };
  handlers_["egress_check"] = [first_spec](const Json& args,
                                           const CallContext& context) -> Result<Json> {
    Json spec = first_spec(args);
    if (egress_allowlist_mode(context.settings) && spec.contains("domains") &&
        spec["domains"].is_array()) {
      for (const Json& domain : spec["domains"]) {
        if (!domain.is_string()) continue;
        std::string host = domain.get<std::string>();
        if (!egress_domain_allowed(host)) {
          return Json{{"blocked", host}, {"message", egress_block_message(host)}};
        }
      }
    }
    return Json{{"blocked", nullptr}};
  };
  handlers_["save_artifact"] = [this, first_spec](const Json& args, const CallContext& context) {
    return save_artifact(first_spec(args), context);
  };
  handlers_["prov_record"] = [this, first_spec](const Json& args, const CallContext& context) {
    return prov_record(first_spec(args), context);
  };
  handlers_["prov_resolve_path"] = [this](const Json& args, const CallContext& context) {
    return prov_resolve_path(args.empty() ? Json() : args[0], context);
  };
  handlers_["capabilities"] = [](const Json&, const CallContext&) -> Result<Json> {
    return Json{{"bash", true},
                {"artifacts", true},
                {"provenance", true},
                {"llm", false},
                {"web", false},
                {"delegation", false},
                {"host_capability_version", "2"}};
  };
}

Result<Json> HostDispatcher::call(const std::string& method, const Json& args,
                                  const CallContext& context) {
  auto handler = handlers_.find(method);
  if (handler == handlers_.end()) {
    // Before auditing: an unknown method leaves no row.
    return handler_error(HandlerErrorKind::kValue, "unknown host method: '" + method + "'");
  }
  Json decoded = decode_args(args);
  store::HostCallRecord row;
  row.method = method;
  row.args = decoded;
  row.frame_id = context.frame_id;
  row.side_effect_class = "runtime_mutation";
  row.resource_keys = {"host:" + method};
  row.summary = call_summary(method, decoded);
  if (method == "authorize_bash" && !decoded.empty() && decoded[0].is_object() &&
      decoded[0].value("command_sha256", Json()).is_string()) {
    // The key the result's row carries too ("bash", bash_capability.cpp):
    // a reader joins the decision to the exit code through it.
    row.resource_keys = {"command-sha256:" + decoded[0]["command_sha256"].get<std::string>()};
  }
  if (context.action_context.is_object()) {
    if (auto it = context.action_context.find("action_group_id");
        it != context.action_context.end() && it->is_string()) {
      row.action_group_id = it->get<std::string>();
    }
    if (auto it = context.action_context.find("action_id");
        it != context.action_context.end() && it->is_string()) {
      row.action_id = it->get<std::string>();
    }
  }

  Result<Json> outcome = Json();
  auto workspace_path = workspace(context.frame_id);
  std::string workspace_text = workspace_path ? workspace_path.value() : std::string();
  if (auto secret = secret_gate_target(method, decoded, workspace_text)) {
    outcome = Json{{"error",
                    "Permission denied: access to secret files (e.g. .env / keys) is "
                    "blocked: " +
                        *secret}};
    row.decided_by = "secret-file gate";
  } else if (auto tool = gated_tool(method)) {
    const std::string target = permission_target(method, decoded);
    GateVerdict verdict =
        gate(*config_.store, context.frame_id, *tool, target, context.action_context,
             lower_trimmed(context.settings.unattended_approval), context.approver,
             permission_target_verbatim(method, decoded, target));
    row.permission_decision_id = verdict.decision_id;
    row.decided_by = verdict.decided_by;
    if (!verdict.allow) {
      outcome = Json{
          {"error", "Permission denied: " + (verdict.message.empty() ? std::string("denied by user")
                                                                     : verdict.message)}};
    } else {
      outcome = handler->second(decoded, context);
    }
  } else {
    outcome = handler->second(decoded, context);
  }

  if (outcome) {
    row.ok = !is_soft_failure(outcome.value());
    row.result = outcome.value();
  } else {
    row.ok = false;
  }
  row.outcome = call_outcome(method, outcome);
  // The audit row is written whatever happened; an audit failure must not
  // turn a completed action into an error the cell would retry.
  (void)config_.store->log_host_call(row);
  return outcome;
}

}  // namespace o4s::host
