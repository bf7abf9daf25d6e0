// host.web_download: a URL's body written into the workspace (issue 30
// part 3). The body goes to a hidden temporary beside the destination and
// is renamed over it only when complete, so a cell never sees half a file;
// the destination's directory is opened once and proven inside the
// workspace from its fd, so a symlink swapped in meanwhile cannot move it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>

#include "base/paths.h"
#include "base/random_id.h"
#include "base/scope_exit.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "base/write_all.h"
#include "host/dispatcher.h"
#include "host/web_client.h"
#include "host/web_methods.h"
#include "host/web_spec.h"
#include "host/workspace_paths.h"

namespace o4s::host {

namespace {

namespace fs = std::filesystem;

constexpr long long kDefaultMaxBytes = 1LL << 30;
constexpr long long kMostMaxBytes = 1LL << 40;
constexpr std::size_t kMaxPathBytes = 4096;

struct Destination {
  UniqueFd directory;
  std::string directory_path;  // real, inside the workspace
  std::string name;
};

Error path_error(const std::string& message) {
  return handler_error(HandlerErrorKind::kValue, "web_download: " + message);
}

// The path an open directory has now (not the one it was opened by).
Result<std::string> directory_path(int fd) {
  char link[PATH_MAX];
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(proc.c_str(), link, sizeof link - 1);
  if (n < 0) return system_error("readlink " + proc, errno);
  return std::string(link, static_cast<std::size_t>(n));
}

using Owner = std::optional<std::pair<std::uint32_t, std::uint32_t>>;

// What the host makes for the worker is the worker's: its own uid when a
// root host runs it under one (it could not otherwise change its own
// download or write beside it); else whoever owns the directory.
void give_to_worker(int fd, int directory, const Owner& owner) {
  if (::geteuid() != 0) return;
  if (owner) {
    (void)::fchown(fd, owner->first, owner->second);
    return;
  }
  struct stat info {};
  if (::fstat(directory, &info) == 0) (void)::fchown(fd, info.st_uid, info.st_gid);
}

// The missing directories, outermost first, each made and opened beneath
// the fd of the one above it, never through a path: a directory swapped
// for a link after its parent was proven cannot send a mkdir outside.
Result<UniqueFd> make_missing(UniqueFd fd, const std::vector<fs::path>& missing,
                              const Owner& owner) {
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    const std::string name = it->filename().string();
    const bool made = ::mkdirat(fd.get(), name.c_str(), 0755) == 0;
    if (!made && errno != EEXIST) {
      return system_error("web_download: mkdir " + it->string(), errno);
    }
    UniqueFd next(
        ::openat(fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return system_error("web_download: open " + it->string(), errno);
    // Only what the host made: one that appeared meanwhile keeps its owner.
    if (made) give_to_worker(next.get(), fd.get(), owner);
    fd = std::move(next);
  }
  return fd;
}

// The deepest existing ancestor of `target` is resolved (symlinks
// followed, as write_file does) and must be inside the workspace; the
// missing directories below it are created.
Result<Destination> destination(const std::string& workspace, const std::string& requested,
                                const Owner& owner) {
  auto root = real_path(workspace);
  if (!root) return std::move(root).error();
  if (requested.empty() || requested.size() > kMaxPathBytes || requested.back() == '/') {
    return path_error("path must name a file inside the workspace, not '" +
                      requested.substr(0, 200) + "'");
  }
  fs::path target = requested[0] == '/' ? fs::path(requested) : fs::path(*root) / requested;
  target = target.lexically_normal();
  const std::string name = target.filename().string();
  const std::string escape =
      "path escapes the workspace: '" + requested + "' (stay inside your working dir)";
  if (!path_contains(*root, target.string()) || name.empty() || name == "." || name == "..") {
    return path_error(escape);
  }
  fs::path parent = target.parent_path();
  std::vector<fs::path> missing;
  while (::access(parent.c_str(), F_OK) != 0 && path_contains(*root, parent.string())) {
    missing.push_back(parent);
    parent = parent.parent_path();
  }
  auto existing = resolve_in_workspace(*root, parent.string());
  if (!existing) return path_error(existing.error().message);
  UniqueFd fd(::open(existing->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return system_error("web_download: open " + *existing, errno);
  auto proven = directory_path(fd.get());
  if (!proven) return std::move(proven).error();
  if (!path_contains(*root, *proven)) return path_error(escape);
  auto made = make_missing(std::move(fd), missing, owner);
  if (!made) return std::move(made).error();
  auto actual = directory_path(made->get());
  if (!actual) return std::move(actual).error();
  if (!path_contains(*root, *actual)) return path_error(escape);
  return Destination{std::move(made).value(), std::move(actual).value(), name};
}

// Provenance: the file is a version like a cell's output, with the URL as
// its source, so lineage from anything computed on it reaches the web.
Json record_version(HostDispatcher& host, const CallContext& context, const std::string& path,
                    const std::string& name, std::int64_t size, const std::string& checksum,
                    const WebResponse& response, const std::string& url) {
  store::CellArtifact artifact;
  artifact.path = path;
  artifact.filename = name;
  artifact.size_bytes = size;
  artifact.checksum = checksum;
  artifact.frame_id = context.frame_id;
  artifact.content_type =
      response.content_type.empty() ? std::nullopt : std::optional(response.content_type);
  artifact.source = Json{{"kind", "web_download"},
                         {"url", url},
                         {"final_url", response.final_url},
                         {"status", response.status}};
  auto record = host.store()->record_cell_artifact(artifact);
  return record ? record->value("version_id", Json()) : Json();
}

}  // namespace

Result<Json> web_download(HostDispatcher& host, const Json& args, const CallContext& context) {
  auto spec = web_spec("web_download", args, 60);
  if (!spec) return std::move(spec).error();
  const Json raw = args.empty() || !args[0].is_object() ? Json::object() : args[0];
  auto max_bytes =
      bounded_integer("web_download", raw, "max_bytes", kDefaultMaxBytes, kMostMaxBytes);
  if (!max_bytes) return std::move(max_bytes).error();
  // The host writes as itself: the worker's file-size limit must still hold.
  const auto size_limit = context.worker_file_size_limit;
  const bool capped = size_limit && static_cast<std::uint64_t>(*max_bytes) > *size_limit;
  if (capped) *max_bytes = static_cast<long long>(*size_limit);
  const std::string requested = raw.value("path", std::string());
  auto workspace = host.workspace(context.frame_id);
  if (!workspace) return std::move(workspace).error();
  auto where = destination(*workspace, requested, context.worker_owner);
  if (!where) return std::move(where).error();
  auto policy = session_egress_policy(host, context);
  if (!policy) return Json{{"error", "web_download: " + policy.error().message}};

  const int directory = where->directory.get();
  const std::string temporary = ".o4s-download-" + random_hex(8) + ".part";
  UniqueFd file(::openat(directory, temporary.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!file) return system_error("web_download: create in " + where->directory_path, errno);
  ScopeExit discard([&] { ::unlinkat(directory, temporary.c_str(), 0); });
  give_to_worker(file.get(), directory, context.worker_owner);

  WebRequest request = spec->request;
  request.max_bytes = *max_bytes;
  // An interrupted cell's download stops; the temporary is removed below.
  request.cancelled = context.interrupted;
  Sha256 digest;
  WebResponse response = web_get(*policy, request, [&](std::string_view chunk) {
    digest.update(chunk);
    return write_all(file.get(), chunk);
  });
  if (response.failure != WebFailure::kNone) {
    const std::string why = capped && response.failure == WebFailure::kTooLarge
                                ? " (the kernel's file-size limit, OPENAI4S_KERNEL_FILE_SIZE_LIMIT)"
                                : "";
    return Json{
        {"error", "web_download: " + request.url.substr(0, 500) + ": " + response.message + why}};
  }
  if (::renameat(directory, temporary.c_str(), directory, where->name.c_str()) != 0) {
    return system_error("web_download: rename to " + requested, errno);
  }
  discard.release();
  const std::string path = where->directory_path + "/" + where->name;
  const std::string checksum = digest.hex_digest();
  Json version = record_version(host, context, path, where->name, response.bytes, checksum,
                                response, request.url);
  return Json{{"url", request.url},
              {"final_url", response.final_url},
              {"path", path},
              {"status", response.status},
              {"content_type", response.content_type},
              {"bytes", response.bytes},
              {"sha256", checksum},
              {"redirects", response.redirects},
              {"egress", response.egress_basis},
              {"version_id", version}};
}

}  // namespace o4s::host
