#include "host/host_methods.h"

#include <algorithm>

#include "host/background_jobs.h"
#include "host/dispatcher.h"
#include "host/egress.h"
#include "host/env_handlers.h"
#include "host/web_methods.h"

namespace o4s::host {

namespace {

using T = TargetKind;

Json first_spec(const Json& args) {
  return !args.empty() && args[0].is_object() ? args[0] : Json::object();
}

// -- handlers: each reads its decoded arguments and calls the service ------

Result<Json> authorize_bash(HostDispatcher& host, const Json& args, const CallContext& context) {
  Json spec = first_spec(args);
  if (context.authorize_override) return context.authorize_override(spec);
  return host.authorize_bash(spec, context);
}

Result<Json> consume_bash(HostDispatcher& host, const Json& args, const CallContext& context) {
  return host.consume_bash(first_spec(args), context.bash_generation);
}

Result<Json> record_bash(HostDispatcher& host, const Json& args, const CallContext& context) {
  return host.record_bash(first_spec(args), context.bash_generation);
}

// The worker's pre-check of a shell command's URLs: the same policy as a
// fetch (extras and the conversation's grants included), names only.
Result<Json> egress_check(HostDispatcher& host, const Json& args, const CallContext& context) {
  Json spec = first_spec(args);
  if (!egress_allowlist_mode(context.settings.egress_mode) || !spec.contains("domains") ||
      !spec["domains"].is_array()) {
    return Json{{"blocked", nullptr}};
  }
  auto policy = session_egress_policy(host, context);
  for (const Json& domain : spec["domains"]) {
    if (!domain.is_string()) continue;
    std::string name = domain.get<std::string>();
    if (!policy || !domain_basis(*policy, name)) {
      return Json{{"blocked", name}, {"message", egress_block_message(name)}};
    }
  }
  return Json{{"blocked", nullptr}};
}

Result<Json> save_artifact(HostDispatcher& host, const Json& args, const CallContext& context) {
  return host.save_artifact(first_spec(args), context);
}

Result<Json> prov_record(HostDispatcher& host, const Json& args, const CallContext& context) {
  return host.prov_record(first_spec(args), context);
}

Result<Json> prov_resolve_path(HostDispatcher& host, const Json& args, const CallContext& context) {
  return host.prov_resolve_path(args.empty() ? Json() : args[0], context);
}

Result<Json> capabilities(HostDispatcher&, const Json&, const CallContext&) {
  return Json{{"bash", true},
              {"artifacts", true},
              {"provenance", true},
              {"llm", false},
              {"web", true},
              {"delegation", false},
              {"host_capability_version", "2"}};
}

// -- standing defaults (spec §4.3) ----------------------------------------

constexpr DefaultRule kAllow[] = {{"*", "allow"}};
constexpr DefaultRule kAsk[] = {{"*", "ask"}};
constexpr DefaultRule kReadFile[] = {{"*.env", "deny"}, {"*", "allow"}};
constexpr DefaultRule kAllowSince2[] = {{"*", "allow", 2}};
constexpr DefaultRule kMcpCall[] = {{"volcengine-datapro/dataPro_search", "allow", 3},
                                    {"*", "ask"}};

// Gated (spec §4.1): the permission tool is the method's own name, except
// for authorize_bash, whose tool is "bash".
constexpr HostMethod gated(std::string_view name, TargetKind target,
                           std::span<const DefaultRule> defaults = {}) {
  HostMethod row;
  row.name = name;
  row.gate = name;
  row.target = target;
  row.defaults = defaults;
  return row;
}

constexpr HostMethod secret_path(HostMethod row) {
  row.secret_path_gate = true;
  return row;
}

constexpr HostMethod served(HostMethod row, HostHandler handler) {
  row.handler = handler;
  return row;
}

constexpr HostMethod ungated(std::string_view name, std::span<const DefaultRule> defaults = {}) {
  HostMethod row;
  row.name = name;
  row.defaults = defaults;
  return row;
}

constexpr HostMethod bash_capability() {
  HostMethod row = gated("authorize_bash", T::kCommand);
  row.gate = "bash";
  row.keyed_by_command = true;
  row.handler = &authorize_bash;
  return row;
}

// A fetch or download: its audit outcome is the status, bytes and egress basis.
constexpr HostMethod web(HostMethod row) {
  row.outcome_text = &web_outcome;
  return row;
}

// No standing rule: a domain the policy does not already allow is put to
// the person (REPL prompt, Jupyter input_request, MCP elicitation).
constexpr HostMethod network_access() {
  HostMethod row = gated("request_network_access", T::kFirstStringOrDomain);
  row.handler = &request_network_access;
  row.before_gate = &network_access_before_gate;
  row.refusal_hint = &network_access_refusal_hint;
  return row;
}

constexpr HostMethod credential(std::string_view name) {
  HostMethod row = gated(name, T::kFirstStringOrName, kAsk);
  row.summary_hidden = true;  // a credential's name is the one thing its row may not show
  return row;
}

// Every method the worker SDK (python/openai4s/sdk, the runtime's
// provenance hooks) calls; tests/python/host/test_host_methods.py holds the
// two lists against each other.
const HostMethod kMethods[] = {
    // Shell capability (§5.1): the command runs in the worker.
    bash_capability(),
    served(ungated("consume_bash_authorization"), &consume_bash),
    served(ungated("record_bash_result"), &record_bash),
    served(ungated("egress_check"), &egress_check),
    // Artifacts and provenance (§5.2).
    served(secret_path(gated("save_artifact", T::kFilenameOrPath, kAllow)), &save_artifact),
    served(ungated("prov_record"), &prov_record),
    served(ungated("prov_resolve_path"), &prov_resolve_path),
    gated("materialise_artifact", T::kFilenameOrVersion),
    ungated("artifacts"),
    ungated("artifact_path"),
    ungated("artifact_marker"),
    ungated("view_image"),
    ungated("lineage_get"),
    ungated("lineage_graph"),
    ungated("query"),
    ungated("query_schema"),
    ungated("frames"),
    // Identity and model.
    served(ungated("capabilities"), &capabilities),
    ungated("get_user_email"),
    ungated("llm"),
    ungated("current_model"),
    ungated("list_models"),
    // Files and web (control tools).
    secret_path(gated("read_file", T::kPath, kReadFile)),
    secret_path(gated("write_file", T::kPath, kAllow)),
    secret_path(gated("edit_file", T::kPath, kAllow)),
    gated("glob", T::kPattern, kAllow),
    gated("grep", T::kPattern, kAllow),
    gated("list_dir", T::kPathOrDot, kAllow),
    web(served(gated("web_fetch", T::kUrlHost, kAllow), &web_fetch)),
    gated("web_search", T::kQuery, kAllow),
    web(served(secret_path(ungated("web_download")), &web_download)),
    ungated("science_list_dbs"),
    ungated("science_search", kAllowSince2),
    network_access(),
    // Progress, memory, completion.
    ungated("todo_write"),
    ungated("todo_read"),
    ungated("plan_update"),
    ungated("plan_read"),
    ungated("review_status"),
    ungated("remember"),
    ungated("submit_output"),
    // Environments.
    served(ungated("env_list"), &env_list),
    served(ungated("env_use"), &env_use),
    served(ungated("env_lock"), &env_lock),
    served(gated("env_setup", T::kPackagesOrName, kAllow), &env_setup),
    // Skills.
    ungated("search_skills"),
    ungated("load_skill"),
    ungated("skills_list"),
    ungated("skills_get"),
    ungated("skills_read"),
    gated("skills_edit", T::kName, kAsk),
    gated("skills_publish", T::kFirstStringOrName, kAsk),
    gated("skills_delete", T::kFirstStringOrName, kAsk),
    ungated("skills_status"),
    ungated("skills_history"),
    ungated("skills_rollback"),
    // Delegation.
    gated("delegate", T::kNone, kAllow),
    ungated("children"),
    ungated("collect"),
    ungated("stop_child"),
    ungated("send_message"),
    ungated("delegation_stats"),
    // Endpoints and credentials.
    ungated("endpoints_list"),
    ungated("endpoints_free_port"),
    ungated("endpoints_register"),
    ungated("endpoints_status"),
    ungated("endpoints_probe"),
    credential("credentials_set"),
    ungated("credentials_issue"),
    ungated("credentials_redeem"),
    ungated("credentials_list"),
    // MCP.
    ungated("mcp_list"),
    ungated("mcp_tools"),
    ungated("mcp_resources"),
    ungated("mcp_resource_read", kAsk),
    ungated("mcp_prompts"),
    ungated("mcp_prompt_get", kAsk),
    gated("mcp_call", T::kServerTool, kMcpCall),
    // Background execution.
    served(gated("exec_background", T::kCode, kAsk), &exec_background),
    served(ungated("exec_peek"), &exec_peek),
    served(ungated("exec_interrupt"), &exec_interrupt),
    served(ungated("exec_list"), &exec_list),
    // App tiles, remote compute.
    ungated("app_render"),
    ungated("app_tiles"),
    ungated("remote_gpu_status"),
    ungated("accelerator_status"),
    ungated("stage_model_asset"),
    ungated("register_remote_capability"),
    ungated("fold"),
    ungated("score_mutations"),
};

}  // namespace

std::span<const HostMethod> host_methods() { return kMethods; }

const HostMethod* find_host_method(std::string_view name) {
  auto row = std::find_if(std::begin(kMethods), std::end(kMethods),
                          [name](const HostMethod& method) { return method.name == name; });
  return row == std::end(kMethods) ? nullptr : &*row;
}

const store::DefaultRules& default_rules() {
  static const store::DefaultRules rules = [] {
    store::DefaultRules all;
    for (const HostMethod& method : kMethods) {
      for (const DefaultRule& rule : method.defaults) {
        all.rules.push_back({std::string(method.name), std::string(rule.pattern),
                             std::string(rule.decision), rule.since});
        all.version = std::max(all.version, rule.since);
      }
    }
    // v4 changed skills_edit's default to "ask" (the store migrates it).
    all.version = std::max(all.version, 4);
    return all;
  }();
  return rules;
}

std::optional<std::string> refusal(const HostMethod* row, std::string_view name, const Json& args) {
  std::string quoted = "'" + std::string(name) + "'";
  // The spec's wording ("unknown host method: '<m>'") leads both refusals.
  if (row == nullptr) return "unknown host method: " + quoted;
  if (row->handler == nullptr) {
    return "unknown host method: " + quoted +
           " (the worker SDK names it, but this host does "
           "not serve it)";
  }
  std::size_t count = args.is_array() ? args.size() : 0;
  if (count > row->max_args) {
    return "host method " + quoted + " takes at most " + std::to_string(row->max_args) +
           " argument(s), got " + std::to_string(count);
  }
  return std::nullopt;
}

}  // namespace o4s::host
