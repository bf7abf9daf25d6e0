// The one-shot shell capability (spec host.md §6): authorize -> consume ->
// record_result. Single use, short expiry (15 s, capped at 60 s), bound to
// the exact worker generation, the command digest, the cwd and a worker
// challenge. In memory only: a host restart invalidates every capability.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/store.h"

namespace o4s::host {

using Json = nlohmann::json;

struct BashContext {
  std::string workspace;                   // the session's workspace (host side)
  std::optional<std::string> frame_id;     // for audit
  std::optional<std::string> generation;   // trusted (bound) worker generation
  std::vector<std::string> allowed_roots;  // OPENAI4S_BASH_ALLOWED_ROOTS entries
  bool egress_allowlist = false;           // OPENAI4S_EGRESS allowlist mode
  // OPENAI4S_EGRESS_ALLOW and the conversation's request_network_access grants.
  std::vector<std::string> egress_also_allowed;
};

class BashAuthorizationService {
 public:
  using Clock = std::function<std::int64_t()>;  // ms since epoch; tests inject
  using AuditSink = std::function<void(const store::HostCallRecord&)>;

  // `ttl_ms` is the capability lifetime: non-positive means the default and
  // anything above kMaxTtlMs is capped (the worker rejects longer ones).
  explicit BashAuthorizationService(Clock clock = nullptr, std::int64_t ttl_ms = kDefaultTtlMs);

  // Each returns the success payload or a soft-fail {"error": "<exact text>"}.
  Json authorize(const Json& spec, const BashContext& context);
  // `trusted_generation` is the calling kernel's bound generation (nullopt
  // when the caller has none): a token issued to another generation is
  // refused whatever generation the spec names.
  Json consume(const Json& spec,
               const std::optional<std::string>& trusted_generation = std::nullopt);
  // Writes the synthetic `bash` audit row through `audit` on success.
  Json record_result(const Json& spec, const AuditSink& audit,
                     const std::optional<std::string>& trusted_generation = std::nullopt);
  // The worker of `generation` is gone: its tokens not yet recorded are
  // refused from now on (kept as tombstones so a replay is named as one).
  void revoke_generation(const std::string& generation);

  // Capabilities not yet recorded (the 1024 cap counts these).
  std::size_t outstanding() const;
  std::int64_t ttl_ms() const { return ttl_ms_; }

  static constexpr const char* kVersion = "openai4s-bash-capability-v1";
  static constexpr std::int64_t kDefaultTtlMs = 15'000;
  static constexpr std::int64_t kMaxTtlMs = 60'000;
  static constexpr std::size_t kMaxOutstanding = 1024;

 private:
  // A recorded entry is a tombstone: its capability is dropped and it only
  // remembers that the token was spent, until retention purges it.
  struct Entry {
    Json capability;
    std::int64_t issued_at_ms = 0;
    std::int64_t expires_at_ms = 0;
    std::optional<std::int64_t> consumed_at_ms;
    std::optional<std::int64_t> recorded_at_ms;
    std::string generation;  // the trusted generation it was issued to
    bool revoked = false;
  };
  // The refusal for using `entry` from `trusted_generation`, or nullptr.
  static const char* generation_refusal(const Entry& entry,
                                        const std::optional<std::string>& trusted_generation);
  void purge(std::int64_t now);            // mutex_ held
  std::size_t outstanding_locked() const;  // mutex_ held

  Clock clock_;
  std::int64_t ttl_ms_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace o4s::host
