// The shell capability service (§6.3, §6.4, §6.7). Validation of a request
// runs without the lock (it touches the filesystem); only the token table is
// guarded, and consume/record_result do their whole check-and-mark under
// it, so a token is spent exactly once even with racing callers.
#include "host/bash_capability.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <utility>

#include "base/paths.h"
#include "base/sha256.h"
#include "base/utf8.h"
#include "host/bash_support.h"
#include "host/egress.h"
#include "host/precheck.h"

namespace o4s::host {

namespace {

constexpr const char* kAuth = "bash authorization: ";
constexpr double kMaxTimeoutSeconds = 604800.0;  // 7 days
constexpr std::size_t kMinChallengeChars = 16;
constexpr std::size_t kTokenBytes = 32;
constexpr std::size_t kMinTokenChars = 24;
constexpr std::int64_t kRetentionMs = 3'600'000;
// The fields a consume or a result report must echo, checked in this order.
constexpr const char* kBindings[] = {"command_sha256", "cwd", "generation", "challenge"};

using Refusal = std::optional<std::string>;

Json soft_fail(std::string message) { return Json{{"error", std::move(message)}}; }

// "bash authorization: <detail...>". Built out of line: GCC 12 inlines
// `std::string(kAuth) + "literal"` at -O2 and then warns about its own
// memcpy (-Warray-bounds, a known false positive).
[[gnu::noinline]] Json auth_fail(std::string_view detail, std::string_view more = {},
                                 std::string_view tail = {}) {
  std::string message(kAuth);
  message.append(detail).append(more).append(tail);
  return soft_fail(std::move(message));
}
Refusal refuse(const std::string& detail) { return std::string(kAuth) + detail; }

std::int64_t system_now_ms() {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

const Json& field(const Json& spec, const char* key) {
  static const Json kNull;
  if (!spec.is_object()) return kNull;
  const auto it = spec.find(key);
  return it == spec.end() ? kNull : *it;
}

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

std::string trimmed(std::string_view text) {
  const std::size_t start = text.find_first_not_of(" \t\n\r\f\v");
  if (start == std::string_view::npos) return {};
  return std::string(text.substr(start, text.find_last_not_of(" \t\n\r\f\v") - start + 1));
}

// A number, or a string Python's float() would read.
std::optional<double> as_number(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (!value.is_string()) return std::nullopt;
  const std::string text = trimmed(value.get_ref<const std::string&>());
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return number;
}

// Everything authorize learns about a request before it takes the lock.
struct Request {
  std::string command;
  std::string digest;
  std::string challenge;
  std::string generation;  // trusted if bound, else the worker's
  std::string workspace;
  std::string cwd;
  std::string allowed_root;
  std::vector<std::string> domains;
  std::string category;
};

// Steps 1-5: the command and the worker's identity.
Refusal check_command_and_worker(const Json& spec, const BashContext& context, Request& request) {
  const Json& command = field(spec, "command");
  if (!command.is_string() || is_blank(command.get_ref<const std::string&>())) {
    return refuse("command must be a non-empty string");
  }
  request.command = command.get<std::string>();
  if (request.command.find('\0') != std::string::npos) return refuse("command contains a NUL byte");
  const Json& challenge = field(spec, "challenge");
  if (!challenge.is_string() ||
      utf8::length(challenge.get_ref<const std::string&>()) < kMinChallengeChars) {
    return refuse("missing worker challenge");
  }
  request.challenge = challenge.get<std::string>();
  const Json& generation = field(spec, "generation");
  if (!generation.is_string() || is_blank(generation.get_ref<const std::string&>())) {
    return refuse("missing worker generation");
  }
  request.generation = generation.get<std::string>();
  if (context.generation.has_value() && *context.generation != request.generation) {
    return refuse("worker generation does not match the active Host generation");
  }
  return std::nullopt;
}

// Step 6. Bools are not numbers here: `timeout: true` is a caller bug.
Refusal check_timeout(const Json& spec) {
  const Json& value = field(spec, "timeout");
  double timeout = 120.0;
  if (!value.is_null()) {
    const std::optional<double> number = value.is_boolean() ? std::nullopt : as_number(value);
    if (!number) return refuse("timeout must be a number");
    timeout = *number;
  }
  if (!std::isfinite(timeout) || timeout <= 0) return refuse("timeout must be finite and positive");
  if (timeout > kMaxTimeoutSeconds) return refuse("timeout exceeds the 7 day limit");
  return std::nullopt;
}

// Steps 7-8: the session's workspace, and the worker's view of it.
Refusal check_workspace(const Json& spec, const BashContext& context, Request& request) {
  Result<std::string> host = real_path(context.workspace);
  if (!host.ok()) return refuse("workspace unavailable: " + host.error().message);
  if (!bash::is_directory(*host)) return refuse("workspace is not a directory");
  request.workspace = *host;
  const Json& claimed = field(spec, "workspace");
  if (claimed.is_null() || (claimed.is_string() && claimed.get_ref<const std::string&>().empty())) {
    return std::nullopt;
  }
  if (!claimed.is_string()) return refuse("worker workspace is invalid");
  Result<std::string> worker = real_path(claimed.get<std::string>());
  if (!worker.ok()) return refuse("worker workspace is invalid");
  if (*worker != request.workspace) return refuse("worker workspace does not match the session");
  return std::nullopt;
}

// Steps 9-10. A relative cwd is taken against the workspace (the worker
// always sends an absolute one; the host's own cwd means nothing here).
Refusal check_cwd(const Json& spec, const BashContext& context, Request& request) {
  const Json& cwd = field(spec, "cwd");
  if (cwd.is_null() || (cwd.is_string() && cwd.get_ref<const std::string&>().empty())) {
    return refuse("cwd is required");
  }
  if (!cwd.is_string()) return refuse("cwd does not exist");
  std::string path = cwd.get<std::string>();
  if (path.front() != '/') path = request.workspace + "/" + path;
  Result<std::string> resolved = real_path(path);
  if (!resolved.ok()) return refuse("cwd does not exist");
  if (!bash::is_directory(*resolved)) return refuse("cwd is not a directory");
  request.cwd = *resolved;

  std::vector<std::string> roots = {request.workspace};
  for (const std::string& entry : context.allowed_roots) {
    if (is_blank(entry)) continue;
    Result<std::string> root = real_path(trimmed(entry));
    if (!root.ok()) return refuse("an allowed root is invalid: " + root.error().message);
    if (!bash::is_directory(*root)) continue;
    bool duplicate = false;
    for (const std::string& known : roots) duplicate = duplicate || known == *root;
    if (!duplicate) roots.push_back(*root);
  }
  for (const std::string& root : roots) {
    if (path_contains(root, request.cwd)) {
      request.allowed_root = root;
      return std::nullopt;
    }
  }
  return refuse("workdir escapes the workspace/allowed roots");
}

// Steps 11-14: what the command itself does.
Refusal check_content(const BashContext& context, Request& request) {
  std::optional<std::string> reason;
  try {
    reason = static_precheck(request.command);
  } catch (const std::exception& error) {
    return refuse(std::string("safety precheck unavailable: ") + error.what());
  }
  if (reason) return "bash: blocked by static safety precheck: " + *reason;
  if (references_secret_file(request.command)) {
    return refuse("commands referencing secret files are blocked");
  }
  request.domains = extract_domains(request.command);
  request.category = command_category(request.command, request.domains);
  if (context.egress_allowlist) {
    std::optional<std::string> blocked;
    try {
      blocked = first_blocked_domain(request.domains, context.egress_also_allowed);
    } catch (const std::exception& error) {
      return refuse(std::string("egress policy unavailable: ") + error.what());
    }
    if (blocked) return egress_block_message(*blocked);
  }
  // Step 14 (skill network admission) has no loaded skills to consult: allow.
  return std::nullopt;
}

// Step 15. An empty claim is no claim.
Refusal check_digest(const Json& spec, Request& request) {
  request.digest = sha256_hex(request.command);
  const Json& claimed = field(spec, "command_sha256");
  if (claimed.is_null() || (claimed.is_string() && claimed.get_ref<const std::string&>().empty())) {
    return std::nullopt;
  }
  if (!claimed.is_string() || claimed.get_ref<const std::string&>() != request.digest) {
    return refuse("command digest mismatch");
  }
  return std::nullopt;
}

Refusal validate(const Json& spec, const BashContext& context, Request& request) {
  if (Refusal refusal = check_command_and_worker(spec, context, request)) return refusal;
  if (Refusal refusal = check_timeout(spec)) return refusal;
  if (Refusal refusal = check_workspace(spec, context, request)) return refusal;
  if (Refusal refusal = check_cwd(spec, context, request)) return refusal;
  if (Refusal refusal = check_content(context, request)) return refusal;
  return check_digest(spec, request);
}

// The first binding the caller echoed differently, if any.
const char* mismatched_binding(const Json& spec, const Json& capability) {
  for (const char* key : kBindings) {
    const Json& echoed = field(spec, key);
    if (!echoed.is_string() || echoed != field(capability, key)) return key;
  }
  return nullptr;
}

// The token a consume or result report names, or "" when it names none.
std::string token_of(const Json& spec) {
  const Json& token = field(spec, "token");
  return token.is_string() ? token.get<std::string>() : std::string();
}

}  // namespace

BashAuthorizationService::BashAuthorizationService(Clock clock, std::int64_t ttl_ms)
    : clock_(clock ? std::move(clock) : Clock(system_now_ms)),
      ttl_ms_(ttl_ms <= 0 ? kDefaultTtlMs : std::min(ttl_ms, kMaxTtlMs)) {}

Json BashAuthorizationService::authorize(const Json& spec, const BashContext& context) {
  try {
    Request request;
    if (Refusal refusal = validate(spec, context, request)) return soft_fail(*refusal);
    const std::string generation = context.generation.value_or(request.generation);

    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t now = clock_();
    purge(now);
    if (outstanding_locked() >= kMaxOutstanding) {
      return auth_fail("too many outstanding capabilities");
    }
    std::string token = bash::random_url_safe_token(kTokenBytes);
    if (token.size() < kMinTokenChars || entries_.count(token) != 0) {
      return auth_fail("token generation failed closed");
    }
    Json capability = {
        {"version", kVersion},
        {"token", token},
        {"command_sha256", request.digest},
        {"cwd", request.cwd},
        {"workspace", request.workspace},
        {"allowed_root", request.allowed_root},
        {"frame_id", context.frame_id ? Json(*context.frame_id) : Json()},
        {"generation", generation},
        {"challenge", request.challenge},
        {"category", request.category},
        {"domains", request.domains},
        {"issued_at_ms", now},
        {"expires_at_ms", now + ttl_ms_},
        {"skill_network", {{"allowed", true}}},
    };
    Entry entry;
    entry.capability = capability;
    entry.issued_at_ms = now;
    entry.generation = generation;
    entry.expires_at_ms = now + ttl_ms_;
    entries_.emplace(std::move(token), std::move(entry));
    return capability;
  } catch (const std::exception& error) {
    // Fail closed: no capability leaves a request we could not finish.
    return auth_fail("internal error: ", error.what());
  }
}

const char* BashAuthorizationService::generation_refusal(
    const Entry& entry, const std::optional<std::string>& trusted_generation) {
  if (entry.revoked) return "token was revoked: its worker generation ended";
  if (trusted_generation && *trusted_generation != entry.generation) {
    return "token was issued to another worker generation";
  }
  return nullptr;
}

void BashAuthorizationService::revoke_generation(const std::string& generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [token, entry] : entries_) {
    if (entry.generation == generation && !entry.recorded_at_ms) entry.revoked = true;
  }
}

Json BashAuthorizationService::consume(const Json& spec,
                                       const std::optional<std::string>& trusted_generation) {
  const std::string token = token_of(spec);
  if (token.empty()) return auth_fail("token is required");
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(token);
  if (it == entries_.end()) return auth_fail("unknown or expired token");
  Entry& entry = it->second;
  if (entry.consumed_at_ms || entry.recorded_at_ms) {
    return auth_fail("token was already consumed");
  }
  const std::int64_t now = clock_();
  if (now >= entry.expires_at_ms) {
    entries_.erase(it);
    return auth_fail("token expired before execution");
  }
  if (const char* key = mismatched_binding(spec, entry.capability)) {
    return auth_fail("token binding mismatch (", key, ")");
  }
  if (const char* refusal = generation_refusal(entry, trusted_generation)) {
    return auth_fail(refusal);
  }
  entry.consumed_at_ms = now;
  return Json{{"ok", true}, {"token", token}, {"consumed_at_ms", now}};
}

Json BashAuthorizationService::record_result(const Json& spec, const AuditSink& audit,
                                             const std::optional<std::string>& trusted_generation) {
  const std::string token = token_of(spec);
  if (token.empty()) return soft_fail("bash result: token is required");
  store::HostCallRecord row;
  Json safe;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(token);
    if (it == entries_.end()) return soft_fail("bash result: unknown token");
    Entry& entry = it->second;
    if (!entry.consumed_at_ms) return soft_fail("bash result: token was not consumed");
    if (entry.recorded_at_ms) return soft_fail("bash result: token was already recorded");
    if (const char* refusal = generation_refusal(entry, trusted_generation)) {
      return soft_fail(std::string("bash result: ") + refusal);
    }
    if (const char* key = mismatched_binding(spec, entry.capability)) {
      return soft_fail(std::string("bash result: token binding mismatch (") + key + ")");
    }
    try {
      safe = bash::safe_record(entry.capability, spec);
    } catch (const std::exception& error) {
      return soft_fail(std::string("bash result: internal error: ") + error.what());
    }
    const Json& frame = entry.capability["frame_id"];
    row.method = "bash";
    row.args = Json::array({safe});
    row.ok = safe["status"] == "completed" && safe["exit_code"] == 0;
    row.outcome = safe["status"] == "completed"
                      ? "exit " + std::to_string(safe["exit_code"].get<std::int64_t>())
                      : safe["status"].get<std::string>();
    if (frame.is_string()) row.frame_id = frame.get<std::string>();
    row.resource_keys = {"command-sha256:" + safe["command_sha256"].get<std::string>()};
    // The token is spent: keep only a tombstone so a replay is named as one.
    entry.recorded_at_ms = clock_();
    entry.capability = Json();
  }
  if (audit) {
    try {
      audit(row);
    } catch (...) {
      // The command already ran; a failed audit write must not turn its
      // result into an error the worker cannot act on.
    }
  }
  return Json{{"ok", true}, {"audit", std::move(safe)}};
}

std::size_t BashAuthorizationService::outstanding() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return outstanding_locked();
}

std::size_t BashAuthorizationService::outstanding_locked() const {
  std::size_t count = 0;
  for (const auto& [token, entry] : entries_) {
    if (!entry.recorded_at_ms) ++count;
  }
  return count;
}

// §6.7: unconsumed past expiry; recorded after an hour; consumed but never
// recorded (a worker that died mid-run) an hour after expiry or consumption.
void BashAuthorizationService::purge(std::int64_t now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& entry = it->second;
    bool stale = false;
    if (entry.recorded_at_ms) {
      stale = now - *entry.recorded_at_ms > kRetentionMs;
    } else if (entry.consumed_at_ms) {
      stale = now > std::max(entry.expires_at_ms, *entry.consumed_at_ms) + kRetentionMs;
    } else {
      stale = now >= entry.expires_at_ms;
    }
    it = stale ? entries_.erase(it) : std::next(it);
  }
}

}  // namespace o4s::host
