#include "host/precheck_rules.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "host/precheck_rules_data.h"

namespace o4s::host {

namespace {

using Json = nlohmann::json;

std::set<std::string, std::less<>> string_set(const Json& list) {
  std::set<std::string, std::less<>> out;
  for (const Json& item : list) out.insert(item.get<std::string>());
  return out;
}

PrecheckRules parse_rules() {
  const Json rules = Json::parse(kPrecheckRulesJson);
  PrecheckRules out;
  for (const auto& [key, reason] : rules.at("reasons").items()) {
    out.reasons[key] = reason.get<std::string>();
  }
  out.row_order = rules.at("row_order").get<std::vector<std::string>>();
  out.max_depth = rules.at("max_depth").get<int>();
  out.shells = string_set(rules.at("shells"));
  out.downloaders = string_set(rules.at("downloaders"));
  out.home_spellings = rules.at("home_spellings").get<std::vector<std::string>>();
  out.home_prefix = rules.at("home_prefix").get<std::string>();
  out.root_separators = rules.at("root_separators").get<std::string>();
  out.permissive_modes = string_set(rules.at("permissive_modes"));
  out.harmless_devices = string_set(rules.at("harmless_devices"));
  const Json& del = rules.at("delete");
  out.rm = del.at("rm").get<std::string>();
  out.find_delete_actions = string_set(del.at("find_delete_actions"));
  out.find_exec_actions = string_set(del.at("find_exec_actions"));
  out.xargs_options_with_argument = string_set(del.at("xargs_options_with_argument"));
  out.unresolved_markers = del.at("unresolved_markers").get<std::vector<std::string>>();
  out.directory_changers = string_set(del.at("directory_changers"));
  const Json& rsync = rules.at("rsync");
  out.rsync_delete_options = string_set(rsync.at("delete_options"));
  out.rsync_delete_option_prefix = rsync.at("delete_option_prefix").get<std::string>();
  const Json& one_liners = rules.at("one_liners");
  out.interpreters = string_set(one_liners.at("interpreters"));
  out.interpreter_version_chars = one_liners.at("version_chars").get<std::string>();
  out.interpreter_delete_words = one_liners.at("delete_words").get<std::vector<std::string>>();
  out.interpreter_root_literals = one_liners.at("root_literals").get<std::vector<std::string>>();
  out.ifs_assignments = rules.at("ifs_assignments").get<std::vector<std::string>>();
  out.expansion_chars = rules.at("expansion_chars").get<std::string>();
  for (const auto& [name, options] : rules.at("launch_prefixes").items()) {
    out.launch_prefixes[name] = options.get<std::vector<std::string>>();
  }
  out.prefix_with_operand = string_set(rules.at("prefix_with_operand"));
  out.reserved_words = string_set(rules.at("reserved_words"));
  out.script_sourcers = string_set(rules.at("script_sourcers"));
  out.process_substitutions = rules.at("process_substitutions").get<std::vector<std::string>>();
  return out;
}

}  // namespace

const PrecheckRules& precheck_rules() {
  static const PrecheckRules rules = [] {
    try {
      return parse_rules();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "openai4s: the precheck rule table does not parse: %s\n", error.what());
      std::abort();
    }
  }();
  return rules;
}

}  // namespace o4s::host
