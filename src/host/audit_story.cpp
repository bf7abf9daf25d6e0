#include "host/audit_story.h"

#include "base/utf8.h"
#include "host/host_methods.h"
#include "host/permission_gate.h"
#include "host/precheck.h"

namespace o4s::host {

namespace {

using Json = nlohmann::json;

// A summary is one line of a table; the whole command is the caller's.
constexpr std::size_t kSummaryChars = 200;
constexpr std::size_t kOutcomeChars = 160;

std::string one_line(std::string_view text, std::size_t chars) {
  std::string line;
  line.reserve(text.size());
  for (char c : text) line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  std::string_view head = utf8::prefix(line, chars);
  if (head.size() == line.size()) return line;
  return std::string(head) + "\u2026";
}

}  // namespace

std::optional<std::string> call_summary(const std::string& method, const Json& args) {
  const HostMethod* row = find_host_method(method);
  if (row == nullptr || row->gate.empty() || row->summary_hidden) return std::nullopt;
  std::string target = permission_target(method, args);
  if (target.empty()) return std::nullopt;
  // The bash target is already redacted; other targets are paths, hosts
  // and patterns, which can carry a token too (a URL's query).
  return one_line(redact_secrets(target, kSummaryChars * 4), kSummaryChars);
}

std::string call_outcome(const std::string& method, const Result<Json>& outcome) {
  if (!outcome) return "error: " + one_line(outcome.error().message, kOutcomeChars);
  const Json& value = outcome.value();
  if (value.is_object() && value.size() == 1 && value.contains("error")) {
    const Json& error = value["error"];
    std::string text = error.is_string() ? error.get<std::string>() : error.dump();
    constexpr std::string_view kDenied = "Permission denied: ";
    if (text.rfind(kDenied, 0) == 0) {
      std::string why = text.substr(kDenied.size());
      return why == "denied by user" ? "denied" : "denied: " + one_line(why, kOutcomeChars);
    }
    return "error: " + one_line(redact_secrets(text, kOutcomeChars * 4), kOutcomeChars);
  }
  // The shell runs in the worker after this; its exit code is the row the
  // result leaves (method "bash").
  const HostMethod* row = find_host_method(method);
  if (row != nullptr && row->outcome_text != nullptr && value.is_object()) {
    return one_line(row->outcome_text(value), kOutcomeChars);
  }
  return row != nullptr && row->keyed_by_command ? "allowed" : "ok";
}

}  // namespace o4s::host
