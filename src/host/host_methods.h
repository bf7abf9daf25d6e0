// The one table of host methods (issue 25 point 2). Each row declares a
// method once: whether it is gated and by which permission tool, what its
// rule patterns are matched against, its standing default decisions, its
// audit fields, its argument bound and its handler. The dispatcher, the
// permission gate, the audit row and the worker SDK's list of callable
// methods (exported through _core) all read this table; nothing else
// names a host method.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"
#include "store/store.h"

namespace o4s::host {

class HostDispatcher;
struct CallContext;

// What a method's permission rules (and its audit summary) are matched
// against, read from the decoded arguments (spec host.md §4.1).
enum class TargetKind {
  kNone,                 // nothing to match (the rule pattern "*" only)
  kCommand,              // spec.command, secrets redacted, never cut
  kPath,                 // spec.path
  kPathOrDot,            // spec.path, "." when absent
  kFilenameOrPath,       // spec.filename, else spec.path
  kFilenameOrVersion,    // spec.filename, else spec.version_id
  kUrlHost,              // the host of spec.url, "www." dropped
  kQuery,                // spec.query
  kPattern,              // spec.pattern
  kCode,                 // spec.code
  kName,                 // spec.name
  kFirstStringOrName,    // a string first argument, else spec.name
  kFirstStringOrDomain,  // a string first argument, else spec.domain
  kServerTool,           // "<spec.server>/<spec.tool>"
  kPackagesOrName,       // spec.packages space-joined, else spec.name
};

// A standing rule seeded for the method's permission tool (spec §4.3).
struct DefaultRule {
  std::string_view pattern;
  std::string_view decision;  // "allow", "ask" or "deny"
  int since = 1;              // the seed version that introduced it
};

using Json = nlohmann::json;
using HostHandler = Result<Json> (*)(HostDispatcher& host, const Json& args,
                                     const CallContext& context);
// Runs before the permission gate; a value answers the call without asking
// anyone (a malformed argument, or nothing left to ask for).
using BeforeGate = std::optional<Json> (*)(HostDispatcher& host, const Json& args,
                                           const CallContext& context);

struct HostMethod {
  std::string_view name;
  // The permission tool the gate asks about; empty: not gated.
  std::string_view gate;
  TargetKind target = TargetKind::kNone;
  // Refused before the gate when the target path names a secret file.
  bool secret_path_gate = false;
  std::span<const DefaultRule> defaults;
  // Audit: the row's side-effect class; whether its resource key is the
  // command's sha256 (joins the decision to the "bash" result row) rather
  // than "host:<method>"; whether the row may show a summary at all.
  std::string_view side_effect_class = "runtime_mutation";
  bool keyed_by_command = false;
  bool summary_hidden = false;
  // Most positional arguments a call may carry (the SDK sends at most one).
  std::size_t max_args = 1;
  // Null: the worker SDK may call it but this host does not serve it.
  HostHandler handler = nullptr;
  BeforeGate before_gate = nullptr;
  // Appended to a refusal nobody answered (unattended, or a client that
  // cannot ask): how to allow it instead. `why` is the gate's reason.
  std::string (*refusal_hint)(const Json& args, std::string_view why) = nullptr;
  // The audit row's outcome for a successful result; null: "ok".
  std::string (*outcome_text)(const Json& result) = nullptr;
};

// Every method the worker SDK may call, in one table.
std::span<const HostMethod> host_methods();
// The row for `name`, or null when no row names it.
const HostMethod* find_host_method(std::string_view name);

// Every row's default rules, for Store::seed_default_permission_rules;
// their version is the newest `since` (bump it with a new default rule).
const store::DefaultRules& default_rules();

// The one-line error a call gets when the table does not let it through:
// unknown to the table, declared but not served here, or over its bound.
// nullopt when the call may proceed to the gate and handler.
std::optional<std::string> refusal(const HostMethod* row, std::string_view name, const Json& args);

}  // namespace o4s::host
