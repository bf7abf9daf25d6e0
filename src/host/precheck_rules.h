// The static precheck's rule table (spec host.md §6.5), parsed once from the
// JSON both the host and the worker run (python/openai4s/sdk/
// precheck_rules.json, embedded at build time). The analysers differ only in
// language; tests/precheck/corpus.jsonl holds them to the same verdicts.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace o4s::host {

struct PrecheckRules {
  std::map<std::string, std::string> reasons;  // row key -> user-visible reason
  std::vector<std::string> row_order;          // first matching row is reported
  int max_depth = 0;
  std::set<std::string, std::less<>> shells;
  std::set<std::string, std::less<>> downloaders;
  std::vector<std::string> home_spellings;
  std::string home_prefix;  // "~": any target it starts is a home (~, ~/x, ~user)
  std::string root_separators;
  std::set<std::string, std::less<>> permissive_modes;
  std::set<std::string, std::less<>> harmless_devices;
  std::string rm;
  std::set<std::string, std::less<>> find_delete_actions;
  std::set<std::string, std::less<>> find_exec_actions;
  std::set<std::string, std::less<>> xargs_options_with_argument;
  std::vector<std::string> unresolved_markers;
  std::set<std::string, std::less<>> directory_changers;
  std::set<std::string, std::less<>> rsync_delete_options;
  std::string rsync_delete_option_prefix;
  std::set<std::string, std::less<>> interpreters;  // one-liner runners (python3 -c, perl -e)
  std::string interpreter_version_chars;            // python3.11 is python
  std::vector<std::string> interpreter_delete_words;
  std::vector<std::string> interpreter_root_literals;
  std::vector<std::string> ifs_assignments;
  std::string expansion_chars;
  // Launch prefix -> its options that take the next word as an argument.
  std::map<std::string, std::vector<std::string>, std::less<>> launch_prefixes;
  std::set<std::string, std::less<>> prefix_with_operand;
  std::set<std::string, std::less<>> reserved_words;
  std::set<std::string, std::less<>> script_sourcers;  // source, .: run a file as a script
  std::vector<std::string> process_substitutions;      // <( and >(: a pipe, not a file
};

// Parsed on first use; a table that does not parse is a build defect, so it
// aborts loudly rather than checking nothing.
const PrecheckRules& precheck_rules();

}  // namespace o4s::host
