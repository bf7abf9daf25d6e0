// save_artifact, prov_record and prov_resolve_path (spec host.md §8).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "base/random_id.h"
#include "base/sha256.h"
#include "host/artifact_snapshot.h"
#include "host/dispatcher.h"
#include "host/workspace_paths.h"

namespace o4s::host {

namespace {

std::string string_field(const Json& spec, const char* key) {
  auto it = spec.find(key);
  return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::string> optional_field(const Json& spec, const char* key) {
  std::string value = string_field(spec, key);
  return value.empty() ? std::nullopt : std::optional(value);
}

// Every string the store keeps from a spec is bounded: a cell decides them.
constexpr std::size_t kMaxPathBytes = 4096;
constexpr std::size_t kMaxNameBytes = 255;
constexpr std::size_t kMaxCellIdBytes = 256;
constexpr std::size_t kMaxSourceBytes = 16'384;  // `source`, serialised
constexpr std::int64_t kDefaultArtifactMaxBytes = 1LL << 30;
constexpr std::int64_t kDefaultArtifactQuotaBytes = 4LL << 30;

Status check_length(const char* method, const char* key, std::size_t size, std::size_t limit) {
  if (size <= limit) return {};
  return handler_error(HandlerErrorKind::kValue,
                       std::string(method) + ": " + key + " is " + std::to_string(size) +
                           " bytes; the limit is " + std::to_string(limit));
}

Status check_spec_strings(const char* method, const Json& spec) {
  struct Bound {
    const char* key;
    std::size_t limit;
  };
  for (const Bound& bound :
       {Bound{"path", kMaxPathBytes}, Bound{"filename", kMaxNameBytes},
        Bound{"content_type", kMaxNameBytes}, Bound{"execution_cell_id", kMaxCellIdBytes},
        Bound{"producing_cell_id", kMaxCellIdBytes}}) {
    if (Status ok =
            check_length(method, bound.key, string_field(spec, bound.key).size(), bound.limit);
        !ok) {
      return ok;
    }
  }
  if (auto it = spec.find("source"); it != spec.end() && !it->is_null()) {
    std::size_t size = it->dump(-1, ' ', false, Json::error_handler_t::replace).size();
    if (Status ok = check_length(method, "source (serialised)", size, kMaxSourceBytes); !ok) {
      return ok;
    }
  }
  return {};
}

// A byte count from the environment; unset or unparsable keeps the default.
std::int64_t byte_setting(const std::string& text, std::int64_t fallback) {
  try {
    std::size_t used = 0;
    long long value = std::stoll(text, &used);
    return used == text.size() && value > 0 ? value : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

Result<std::vector<std::string>> HostDispatcher::validated_inputs(const Json& ids,
                                                                  const CallContext& context) {
  std::vector<std::string> valid;
  if (!ids.is_array()) return valid;
  std::optional<store::FrameScope> scope;
  if (context.frame_id) {
    if (auto resolved = config_.store->resolve_frame_scope(context.frame_id)) scope = *resolved;
  }
  for (const Json& id : ids) {
    if (!id.is_string() || id.get_ref<const std::string&>().empty()) continue;
    const std::string& version = id.get_ref<const std::string&>();
    bool ok = false;
    if (scope) {
      auto in_scope =
          config_.store->version_in_scope(version, scope->root_frame_id, scope->project_id);
      ok = in_scope && in_scope.value();
    }
    // Same words for a foreign and a missing id: no probing other sessions.
    if (!ok) {
      return handler_error(HandlerErrorKind::kKey,
                           "no artifact version '" + version + "' in the current session");
    }
    valid.push_back(version);
  }
  return valid;
}

Result<Json> HostDispatcher::save_artifact(const Json& spec, const CallContext& context) {
  if (Status ok = check_spec_strings("save_artifact", spec); !ok) return std::move(ok).error();
  // Inputs are validated before anything is written.
  auto inputs = validated_inputs(spec.value("input_version_ids", Json::array()), context);
  if (!inputs) return std::move(inputs).error();
  auto workspace_path = workspace(context.frame_id);
  if (!workspace_path) return std::move(workspace_path).error();
  std::string requested = string_field(spec, "path");
  auto source = open_regular_inside(workspace_path.value(), requested);
  if (!source) {
    Error error = std::move(source).error();
    if (error.sys_errno == ENOENT) error.message = "save_artifact: " + error.message;
    return error;
  }
  std::string filename = string_field(spec, "filename");
  if (filename.empty()) filename = basename_of(source->path);

  const std::int64_t max_bytes =
      byte_setting(context.settings.artifact_max_bytes, kDefaultArtifactMaxBytes);
  const std::int64_t quota_bytes =
      byte_setting(context.settings.artifact_quota_bytes, kDefaultArtifactQuotaBytes);
  auto staged = stage_snapshot(source->fd.get(), config_.artifacts_dir, requested, max_bytes);
  if (!staged) return handler_error(HandlerErrorKind::kValue, staged.error().message);
  // The workspace quota counts each distinct content once: saving the same
  // bytes again costs nothing.
  auto stored = config_.store->artifact_bytes_under(workspace_path.value(), staged->checksum);
  if (!stored) {
    discard_snapshot(*staged);
    return std::move(stored).error();
  }
  if (!stored->has_checksum && stored->bytes + staged->size_bytes > quota_bytes) {
    discard_snapshot(*staged);
    return handler_error(HandlerErrorKind::kValue,
                         "save_artifact: " + requested + " (" + std::to_string(staged->size_bytes) +
                             " bytes) would take this workspace's artifacts past its quota of " +
                             std::to_string(quota_bytes) + " bytes (" +
                             std::to_string(stored->bytes) +
                             " stored; OPENAI4S_ARTIFACT_QUOTA_BYTES)");
  }
  auto committed = commit_snapshot(*staged, config_.artifacts_dir);
  if (!committed) return std::move(committed).error();
  const std::string snapshot = committed.value();
  const long long size = staged->size_bytes;

  store::CellArtifact artifact;
  artifact.path = source->path;
  artifact.filename = filename;
  artifact.content_type = optional_field(spec, "content_type");
  artifact.size_bytes = size;
  artifact.checksum = staged->checksum;
  // The execution id is canonical; an explicit producing id is the fallback.
  artifact.producing_cell_id = optional_field(spec, "execution_cell_id");
  if (!artifact.producing_cell_id)
    artifact.producing_cell_id = optional_field(spec, "producing_cell_id");
  artifact.frame_id = context.frame_id;
  artifact.snapshot_path = snapshot;
  artifact.input_version_ids = inputs.value();
  artifact.source = spec.contains("source") ? spec["source"] : Json();
  artifact.reuse_policy = "provisional";
  // The object may already be another version's: it is never unlinked here.
  auto record = config_.store->record_cell_artifact(artifact);
  if (!record) return std::move(record).error();
  Json result = record.value();
  std::string version_id = result.value("version_id", "");
  auto bound = config_.store->version_snapshot_path(version_id);
  if (bound && bound.value() && *bound.value() != snapshot &&
      ::access(bound.value()->c_str(), F_OK) == 0) {
    result["path"] = *bound.value();  // a reused version keeps its own snapshot
  } else {
    (void)config_.store->bind_version_snapshot(version_id, snapshot);
    result["path"] = snapshot;
  }
  if (spec.contains("priority") && spec["priority"].is_number_integer() &&
      spec["priority"].get<long long>() != 0) {
    (void)config_.store->set_artifact_priority(result.value("artifact_id", ""),
                                               static_cast<int>(spec["priority"].get<long long>()));
  }
  return result;
}

Result<Json> HostDispatcher::prov_record(const Json& spec, const CallContext& context) {
  if (Status ok = check_spec_strings("prov_record", spec); !ok) {
    return Json{{"error", ok.error().message}};
  }
  auto inputs = validated_inputs(spec.value("input_version_ids", Json::array()), context);
  if (!inputs) return std::move(inputs).error();
  auto workspace_path = workspace(context.frame_id);
  if (!workspace_path) return Json{{"error", "prov_record: " + workspace_path.error().message}};
  std::string requested = string_field(spec, "path");
  auto opened = open_regular_inside(workspace_path.value(), requested);
  if (!opened) {
    if (opened.error().sys_errno == ENOENT) {
      return Json{{"error", "prov_record: no such output file: " + requested}};
    }
    return Json{{"error", "prov_record: " + opened.error().message}};
  }
  auto checksum = sha256_fd(opened->fd.get(), requested);
  if (!checksum) {
    return Json{{"error", "prov_record: " + requested + ": " + checksum.error().message}};
  }
  store::CellArtifact artifact;
  artifact.path = opened->path;
  artifact.filename = string_field(spec, "filename");
  if (artifact.filename.empty()) artifact.filename = basename_of(opened->path);
  artifact.size_bytes = static_cast<std::int64_t>(opened->size);
  artifact.checksum = checksum.value();
  artifact.producing_cell_id = optional_field(spec, "execution_cell_id");
  if (!artifact.producing_cell_id)
    artifact.producing_cell_id = optional_field(spec, "producing_cell_id");
  artifact.frame_id = context.frame_id;
  artifact.input_version_ids = inputs.value();
  return config_.store->record_cell_artifact(artifact);
}

Result<Json> HostDispatcher::prov_resolve_path(const Json& path, const CallContext& context) {
  // Reached from a cell's every read: cheap, and never an error for the
  // ordinary "not tracked" cases.
  if (!path.is_string() || !context.frame_id) return Json();
  auto scope = config_.store->resolve_frame_scope(context.frame_id);
  if (!scope) return Json();
  auto version = config_.store->version_for_path(path.get<std::string>(), scope->root_frame_id,
                                                 scope->project_id);
  if (!version || !version.value()) return Json();
  return Json(*version.value());
}

}  // namespace o4s::host
