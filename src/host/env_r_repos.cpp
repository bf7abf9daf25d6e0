#include "host/env_r_repos.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <vector>

#include "base/ascii.h"
#include "base/file_io.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "host/dispatcher.h"
#include "host/egress_policy.h"
#include "host/web_client.h"

namespace o4s::host {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// A PACKAGES index of the whole of CRAN is about 12 MB uncompressed.
constexpr std::int64_t kMaxIndexBytes = 64LL << 20;

std::string_view trimmed(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// A version is used in a file name and a URL: digits, letters, '.' and '-'
// only (R's own versions are digits separated by '.' or '-').
bool plain_version(std::string_view version) {
  return !version.empty() && version.size() <= 64 &&
         std::all_of(version.begin(), version.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '.' || c == '-'; });
}

// R's order of versions: the numbers between '.' and '-', compared in turn.
bool version_less(std::string_view a, std::string_view b) {
  auto numbers = [](std::string_view v) {
    std::vector<long> parts;
    long current = 0;
    for (char c : v) {
      if (ascii::is_digit(c)) {
        current = current * 10 + (c - '0');
      } else {
        parts.push_back(current);
        current = 0;
      }
    }
    parts.push_back(current);
    return parts;
  };
  return numbers(a) < numbers(b);
}

std::optional<RTarball> local_tarball(const std::string& repo, const std::string& name) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(repo, ec)) {
    std::string file = entry.path().filename().string();
    if (file.starts_with(name + "_") && file.ends_with(".tar.gz")) found.push_back(entry.path());
  }
  if (found.empty()) return std::nullopt;
  fs::path newest = *std::max_element(found.begin(), found.end());
  std::string file = newest.filename().string();
  auto text = read_file(newest.string());
  return RTarball{newest.string(), file.substr(name.size() + 1, file.size() - name.size() - 8),
                  "file://" + newest.string(), text ? sha256_hex(text.value()) : std::string()};
}

// What the host may connect to for a package source: the egress policy's
// hosts; addresses as check_source_url judged them (every address when
// OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES is set, else the web's own rule).
Result<EgressPolicy> source_policy(const HostSettings& settings, bool allow_private) {
  return make_egress_policy(settings.egress_mode, settings.egress_allow,
                            allow_private ? "0.0.0.0/0 ::/0" : settings.egress_allow_private);
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t wrote = ::write(fd, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(wrote));
  }
  return true;
}

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

Status fetch(const EgressPolicy& policy, const std::string& url, std::int64_t max_bytes,
             Clock::time_point deadline, const std::function<bool(std::string_view)>& sink) {
  WebRequest request;
  request.url = url;
  request.max_bytes = max_bytes;
  request.timeout = left_until(deadline);
  WebResponse response = web_get(policy, request, sink);
  if (response.failure == WebFailure::kNone) return {};
  return make_error(
      response.failure == WebFailure::kTimeout ? ErrorCode::kTimeout : ErrorCode::kInvalidArgument,
      "the R repository " + url + " (" + std::string(failure_name(response.failure)) +
          "): " + response.message);
}

struct RemoteFetch {
  const EnvSources& sources;
  const EgressPolicy& policy;
  const std::string& download_dir;
  Clock::time_point deadline;
};

// `name` from the CRAN-like repository at `repo`, or nullopt when its index
// does not list it.
Result<std::optional<RTarball>> remote_tarball(const RemoteFetch& how, std::string repo,
                                               const std::string& name) {
  while (repo.ends_with('/')) repo.pop_back();
  const std::string contrib = repo + "/src/contrib/";
  std::string index;
  Status got = fetch(how.policy, contrib + "PACKAGES", kMaxIndexBytes, how.deadline,
                     [&index](std::string_view chunk) {
                       index.append(chunk);
                       return true;
                     });
  if (!got) return std::move(got).error();
  auto version = r_index_version(index, name);
  if (!version) return std::optional<RTarball>();
  const std::string file = name + "_" + *version + ".tar.gz";
  const std::string path = how.download_dir + "/" + file;
  UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out) return system_error("open " + path, errno);
  Sha256 digest;
  Status saved = fetch(how.policy, contrib + file, static_cast<std::int64_t>(how.sources.max_bytes),
                       how.deadline, [&out, &digest](std::string_view chunk) {
                         digest.update(chunk);
                         return write_all(out.get(), chunk);
                       });
  if (!saved) return std::move(saved).error();
  return std::optional<RTarball>(RTarball{path, *version, contrib + file, digest.hex_digest()});
}

}  // namespace

std::optional<std::string> r_index_version(std::string_view index, std::string_view name) {
  std::optional<std::string> best;
  std::string package;
  std::string version;
  auto close_record = [&] {
    if (package == name && plain_version(version) && (!best || version_less(*best, version))) {
      best = version;
    }
    package.clear();
    version.clear();
  };
  std::size_t start = 0;
  while (start <= index.size()) {
    std::size_t end = index.find('\n', start);
    if (end == std::string_view::npos) end = index.size();
    std::string_view line = index.substr(start, end - start);
    if (trimmed(line).empty()) {
      close_record();
    } else if (line.front() != ' ' && line.front() != '\t') {
      std::size_t colon = line.find(':');
      std::string_view key = line.substr(0, colon);
      std::string_view value =
          colon == std::string_view::npos ? "" : trimmed(line.substr(colon + 1));
      if (key == "Package") package = value;
      if (key == "Version") version = value;
    }
    start = end + 1;
  }
  close_record();
  return best;
}

Result<RTarball> find_r_package(const EnvSources& sources, const HostSettings& settings,
                                const std::string& name, const std::string& download_dir,
                                Clock::time_point deadline) {
  auto policy = source_policy(settings, sources.allow_private);
  if (!policy) return std::move(policy).error();
  RemoteFetch how{sources, *policy, download_dir, deadline};
  for (const auto& repo : sources.r_repos) {
    if (!is_url(repo)) {
      if (auto found = local_tarball(repo, name)) return *found;
      continue;
    }
    auto found = remote_tarball(how, repo, name);
    if (!found) return std::move(found).error();
    if (found->has_value()) return **found;
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "unknown R package " + name + ": no " + name +
                        "_<version>.tar.gz in the configured R repositories (" +
                        sources.describe() + ")");
}

}  // namespace o4s::host
