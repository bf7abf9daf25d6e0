// The host dispatcher (spec host.md §2-3): the one entry point through which
// a cell acts on the host. Every call is decoded, gated by the permission
// policy, handled, and audited (one host_call_log row), whatever happens.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/result.h"
#include "host/background_jobs.h"
#include "host/bash_capability.h"
#include "host/host_methods.h"
#include "host/permission_gate.h"
#include "store/store.h"

namespace o4s::host {

using Json = nlohmann::json;

struct DispatcherConfig {
  std::shared_ptr<store::Store> store;
  std::optional<std::string> workspace;  // explicit session workspace
  std::string data_dir;                  // default workspaces live under it
  std::string artifacts_dir;             // artifact snapshots
};

// Host policy read from the process environment by the embedder, where it
// can read it safely (the Python binding holds the GIL, which guards
// os.environ's setenv; the C++ core never calls getenv mid-request).
struct HostSettings {
  std::string unattended_approval = "deny";  // OPENAI4S_UNATTENDED_APPROVAL
  std::string egress_mode;                   // OPENAI4S_EGRESS
  std::string egress_allow;                  // OPENAI4S_EGRESS_ALLOW (extra domains)
  std::string egress_allow_private;          // OPENAI4S_EGRESS_ALLOW_PRIVATE (IPs / CIDRs)
  std::string bash_allowed_roots;            // OPENAI4S_BASH_ALLOWED_ROOTS (':'-separated)
  std::string artifact_max_bytes;            // OPENAI4S_ARTIFACT_MAX_BYTES (one save)
  std::string artifact_quota_bytes;          // OPENAI4S_ARTIFACT_QUOTA_BYTES (one workspace)
  // host.env's sources and budgets: kEnvInstallVariables (env_sources.h)
  // by name, as the process environment has them.
  std::map<std::string, std::string> env_install;
};

// Per-call state the embedder binds (the Python API's thread-local bindings).
struct CallContext {
  HostSettings settings;
  std::optional<std::string> frame_id;
  std::optional<std::string> bash_generation;
  Json action_context = Json::object();
  // The embedder's replacement for the capability service's authorize
  // (the acceptance suite swaps it on the instance); empty = native.
  std::function<Result<Json>(const Json& spec)> authorize_override;
  // Asks a person when the policy says "ask"; empty = the unattended policy.
  Approver approver;
  // Set by the dispatcher for a gated method's handler: the decision that
  // let the call through (an install records it).
  std::optional<std::string> permission_decision_id;
  std::string decided_by;
  // The calling kernel's background jobs; null: it cannot start any.
  std::shared_ptr<BackgroundJobs> background;
  // True once the calling kernel was interrupted during this call: a long
  // action polls it and stops (a download); empty: never.
  std::function<bool()> interrupted;
  // The calling worker's uid/gid (a root host's sandbox) and its file-size
  // limit: what the host writes for it (web_download) is owned and bounded
  // as the worker's own writes are.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> worker_owner;
  std::optional<std::uint64_t> worker_file_size_limit;
};

// What a handler failing hard maps to at the edge (ValueError, KeyError,
// FileNotFoundError): kept distinct from soft-fail results.
enum class HandlerErrorKind { kValue, kKey, kFileNotFound, kRuntime };
Error handler_error(HandlerErrorKind kind, std::string message);
HandlerErrorKind handler_error_kind(const Error& error);

// Shared-owned by its embedders: a background job's worker holds it weakly
// (weak_from_this) so its host calls reach the dispatcher that started it.
class HostDispatcher : public std::enable_shared_from_this<HostDispatcher> {
 public:
  explicit HostDispatcher(DispatcherConfig config);

  // The dispatch pipeline. A soft failure is a {"error": ...} result, not an
  // Error; an Error is a raised exception (unknown method, bad input).
  Result<Json> call(const std::string& method, const Json& args, const CallContext& context);

  // The capability service's native steps (also reachable directly).
  Json authorize_bash(const Json& spec, const CallContext& context);
  // `generation`: the calling kernel's trusted generation, if it has one.
  Json consume_bash(const Json& spec, const std::optional<std::string>& generation);
  Json record_bash(const Json& spec, const std::optional<std::string>& generation);
  // restart()/shutdown() of the kernel that held `generation`.
  void revoke_bash_generation(const std::string& generation) {
    bash_.revoke_generation(generation);
  }

  // The session workspace: explicit, else data_dir/agent-workspaces/<frame>.
  Result<std::string> workspace(const std::optional<std::string>& frame_id);
  void set_workspace(std::optional<std::string> workspace);
  std::shared_ptr<store::Store> store() const { return config_.store; }
  const std::string& data_dir() const { return config_.data_dir; }

  // Artifact and provenance services (spec §8), the handlers' targets.
  Result<Json> save_artifact(const Json& spec, const CallContext& context);
  Result<Json> prov_record(const Json& spec, const CallContext& context);
  Result<Json> prov_resolve_path(const Json& path, const CallContext& context);

 private:
  Result<Json> gated_call(const HostMethod& row, const Json& decoded, const CallContext& context,
                          store::HostCallRecord& record);
  Result<std::vector<std::string>> validated_inputs(const Json& ids, const CallContext& context);

  DispatcherConfig config_;
  BashAuthorizationService bash_;
  std::mutex workspace_mutex_;
};

// camelCase -> snake_case for the top-level keys of every dict argument
// (each uppercase letter becomes "_" + lowercase); nested values untouched.
Json decode_args(const Json& args);

}  // namespace o4s::host
