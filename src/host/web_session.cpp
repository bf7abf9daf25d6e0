// The session's egress policy and request_network_access (issue 30 part 3).
#include "base/ascii.h"
#include "host/dispatcher.h"
#include "host/web_methods.h"

namespace o4s::host {

namespace {

std::string requested_domain(const Json& args) {
  if (!args.empty() && args[0].is_string()) return args[0].get<std::string>();
  if (!args.empty() && args[0].is_object()) {
    auto it = args[0].find("domain");
    if (it != args[0].end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

Json missing_domain() {
  return Json{{"error", "request_network_access: a 'domain' (e.g. 'example.org') is required"}};
}

// The person is shown the text the cell asked with, and `domain` (its
// normalised form) is what a yes grants: the two must begin alike. Userinfo
// ('pypi.org@evil.example') and a fake scheme ('pypi.org://evil.example')
// would show one domain first and grant the last one.
bool shows_what_it_grants(std::string_view asked, const std::string& domain) {
  std::string text = ascii::lowered(asked);
  text.erase(0, text.find_first_not_of(" \t\r\n"));
  for (std::string_view scheme : {"https://", "http://"}) {
    if (text.starts_with(scheme)) {
      text.erase(0, scheme.size());
      break;
    }
  }
  if (text.starts_with("*.")) text.erase(0, 2);
  text.erase(0, text.find_first_not_of(".["));
  return text.find('@') == std::string::npos && text.starts_with(domain);
}

std::string mode_name(const EgressPolicy& policy) {
  return policy.mode == EgressMode::kOff ? "off" : "allowlist";
}

}  // namespace

Result<EgressPolicy> session_egress_policy(HostDispatcher& host, const CallContext& context) {
  const HostSettings& settings = context.settings;
  auto policy = make_egress_policy(settings.egress_mode, settings.egress_allow,
                                   settings.egress_allow_private);
  if (!policy || !context.frame_id) return policy;
  auto scope = host.store()->resolve_frame_scope(context.frame_id);
  if (!scope) return policy;
  auto rules = host.store()->rules_for(scope->root_frame_id, scope->project_id);
  if (!rules) return std::move(rules).error();  // fail closed: no grants read, none assumed
  for (const store::PermissionRule& rule : rules.value()) {
    if (rule.tool == kEgressGrantTool && rule.decision == "allow" && rule.scope == "conversation" &&
        rule.scope_id == scope->root_frame_id) {
      policy->session_domains.push_back(normalized_domain(rule.pattern));
    }
  }
  return policy;
}

std::optional<Json> network_access_before_gate(HostDispatcher& host, const Json& args,
                                               const CallContext& context) {
  const std::string asked = requested_domain(args);
  if (asked.empty()) return missing_domain();
  const std::string domain = normalized_domain(asked);
  if (domain.empty() || domain.size() > 253) {
    return Json{{"error", "request_network_access: '" + asked.substr(0, 200) +
                              "' is not a domain name (e.g. 'example.org')"}};
  }
  if (!shows_what_it_grants(asked, domain)) {
    return Json{{"error", "request_network_access: '" + asked.substr(0, 200) +
                              "' would be granted as '" + domain +
                              "'; ask for the domain itself (e.g. '" + domain + "')"}};
  }
  auto policy = session_egress_policy(host, context);
  if (!policy) return Json{{"error", "request_network_access: " + policy.error().message}};
  if (auto basis = domain_basis(*policy, domain)) {
    return Json{{"ok", true},      {"domain", domain}, {"mode", mode_name(*policy)},
                {"granted", true}, {"asked", false},   {"basis", *basis}};
  }
  return std::nullopt;
}

Result<Json> request_network_access(HostDispatcher& host, const Json& args,
                                    const CallContext& context) {
  const std::string domain = normalized_domain(requested_domain(args));
  if (domain.empty()) return missing_domain();
  auto scope = host.store()->resolve_frame_scope(context.frame_id);
  if (!context.frame_id || !scope) {
    return Json{
        {"error", "request_network_access: this kernel has no conversation to widen; add '" +
                      domain + "' to OPENAI4S_EGRESS_ALLOW instead"}};
  }
  auto rule = host.store()->set_permission_rule("conversation", scope->root_frame_id,
                                                kEgressGrantTool, domain, "allow");
  if (!rule) return Json{{"error", "request_network_access: " + rule.error().message}};
  return Json{{"ok", true},      {"domain", domain}, {"mode", "allowlist"},
              {"granted", true}, {"asked", true},    {"scope", "conversation"}};
}

std::string network_access_refusal_hint(const Json& args, std::string_view why) {
  const std::string domain = normalized_domain(requested_domain(args));
  std::string hint = " -- nobody could be asked to allow '" + domain +
                     "' here; to allow it without asking, add it to OPENAI4S_EGRESS_ALLOW";
  // A front door that ignores the unattended policy (an MCP server whose
  // client cannot show prompts) must not be advised to set it.
  if (why.find("cannot show approval prompts") == std::string_view::npos) {
    hint += " (or run with OPENAI4S_UNATTENDED_APPROVAL=allow)";
  }
  return hint;
}

std::string web_outcome(const Json& result) {
  std::string text = "HTTP " + std::to_string(result.value("status", 0)) + ", " +
                     std::to_string(result.value("bytes", 0LL)) + " bytes";
  if (result.value("truncated", false)) text += " (truncated)";
  return text + ", egress: " + result.value("egress", std::string("?"));
}

}  // namespace o4s::host
