#include "host/env_r_repos.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "base/ascii.h"
#include "base/deadline.h"
#include "base/file_io.h"
#include "base/sha256.h"
#include "base/unique_fd.h"
#include "base/write_all.h"
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
        // An index's numbers are not trusted to fit: past 10^12 they saturate.
        if (current < 1'000'000'000'000) current = current * 10 + (c - '0');
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
  return RTarball{name, newest.string(),
                  file.substr(name.size() + 1, file.size() - name.size() - 8),
                  "file://" + newest.string(), text ? sha256_hex(text.value()) : std::string()};
}

// What the host may connect to for a package source: the egress policy's
// hosts; addresses as check_source_url judged them (every address when
// OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES is set, else the web's own rule).
Result<EgressPolicy> source_policy(const HostSettings& settings, bool allow_private) {
  return make_egress_policy(settings.egress_mode, settings.egress_allow,
                            allow_private ? "0.0.0.0/0 ::/0" : settings.egress_allow_private);
}

Status fetch(const EgressPolicy& policy, const std::string& url, std::int64_t max_bytes,
             Clock::time_point deadline, const std::function<bool(std::string_view)>& sink) {
  WebRequest request;
  request.url = url;
  request.max_bytes = max_bytes;
  request.timeout = left_until(deadline, std::chrono::milliseconds(1));
  WebResponse response = web_get(policy, request, sink);
  if (response.failure == WebFailure::kNone) return {};
  return make_error(
      response.failure == WebFailure::kTimeout ? ErrorCode::kTimeout : ErrorCode::kInvalidArgument,
      "the R repository " + url + " (" + std::string(failure_name(response.failure)) +
          "): " + response.message);
}

// Dependencies of a CRAN-like package that R itself provides, or that
// are installed already, are not fetched: the base packages, Debian's
// system libraries, and the environment's own library (the stage's copy).
constexpr std::string_view kBasePackages[] = {
    "R",        "base",    "compiler", "datasets", "graphics", "grDevices", "grid", "methods",
    "parallel", "splines", "stats",    "stats4",   "tcltk",    "tools",     "utils"};
constexpr const char* kSystemLibraries[] = {"/usr/local/lib/R/site-library",
                                            "/usr/lib/R/site-library", "/usr/lib/R/library"};
// More packages than any one install should need: a bound on a hostile index.
constexpr std::size_t kMaxRPackages = 200;

bool installed(const std::string& library, const std::string& name) {
  for (std::string_view base : kBasePackages) {
    if (base == name) return true;
  }
  std::error_code ec;
  if (fs::exists(library + "/" + name + "/DESCRIPTION", ec)) return true;
  for (const char* system : kSystemLibraries) {
    if (fs::exists(std::string(system) + "/" + name + "/DESCRIPTION", ec)) return true;
  }
  return false;
}

// The packages asked for, and (from CRAN-like indexes) the dependencies
// they need that are not installed, dependencies first: R CMD INSTALL
// installs its tarballs in the order given, with the target library on
// the library path.
class RResolver {
 public:
  RResolver(const EnvSources& sources, const EgressPolicy& policy, std::string library,
            std::string download_dir, Clock::time_point deadline)
      : sources_(sources),
        policy_(policy),
        library_(std::move(library)),
        download_dir_(std::move(download_dir)),
        deadline_(deadline) {}

  // `asked`: named by the cell (not found is an error); a dependency not
  // found is left for R CMD INSTALL to name.
  Status want(const std::string& name, bool asked) {
    if (!seen_.insert(name).second) return {};
    if (seen_.size() > kMaxRPackages) {
      return make_error(ErrorCode::kInvalidArgument,
                        "more than " + std::to_string(kMaxRPackages) + " R packages to install");
    }
    for (const auto& repo : sources_.r_repos) {
      if (!is_url(repo)) {
        if (auto found = local_tarball(repo, name)) {
          found->name = name;
          order_.push_back(std::move(*found));
          return {};
        }
        continue;
      }
      auto index = index_of(repo);
      if (!index) return std::move(index).error();
      auto entry = r_index_entry(*index.value(), name);
      if (!entry) continue;
      for (const auto& dependency : entry->depends) {
        if (installed(library_, dependency)) continue;
        if (Status ok = want(dependency, false); !ok) return ok;
      }
      return download(repo, name, entry->version);
    }
    if (!asked) return {};
    return make_error(ErrorCode::kInvalidArgument,
                      "unknown R package " + name + ": no " + name +
                          "_<version>.tar.gz in the configured R repositories (" +
                          sources_.describe() + ")");
  }

  std::vector<RTarball> take() { return std::move(order_); }

 private:
  static std::string contrib_of(std::string repo) {
    while (repo.ends_with('/')) repo.pop_back();
    return repo + "/src/contrib/";
  }

  // Each repository's index is fetched once per install.
  Result<const std::string*> index_of(const std::string& repo) {
    if (auto it = indexes_.find(repo); it != indexes_.end()) return &it->second;
    std::string index;
    Status got = fetch(policy_, contrib_of(repo) + "PACKAGES", kMaxIndexBytes, deadline_,
                       [&index](std::string_view chunk) {
                         index.append(chunk);
                         return true;
                       });
    if (!got) return std::move(got).error();
    return &(indexes_[repo] = std::move(index));
  }

  Status download(const std::string& repo, const std::string& name, const std::string& version) {
    const std::string file = name + "_" + version + ".tar.gz";
    const std::string url = contrib_of(repo) + file;
    const std::string path = download_dir_ + "/" + file;
    UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!out) return system_error("open " + path, errno);
    Sha256 digest;
    // One budget for every tarball of the install, as pip's bytes share the
    // proxy's: up to 200 packages of a hostile index cannot each take it.
    std::uint64_t got = 0;
    Status saved = fetch(policy_, url, static_cast<std::int64_t>(sources_.max_bytes - spent_),
                         deadline_, [&out, &digest, &got](std::string_view chunk) {
                           digest.update(chunk);
                           got += chunk.size();
                           return write_all(out.get(), chunk);
                         });
    spent_ += got;
    if (!saved) return saved;
    if (spent_ >= sources_.max_bytes) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the R packages' downloads reached the environment's budget of " +
                            std::to_string(sources_.max_bytes) + " bytes (OPENAI4S_ENV_MAX_BYTES)");
    }
    order_.push_back(RTarball{name, path, version, url, digest.hex_digest()});
    return {};
  }

  const EnvSources& sources_;
  const EgressPolicy& policy_;
  std::string library_;
  std::string download_dir_;
  Clock::time_point deadline_;
  std::map<std::string, std::string> indexes_;
  std::set<std::string> seen_;
  std::vector<RTarball> order_;
  std::uint64_t spent_ = 0;  // bytes of every tarball downloaded so far
};

}  // namespace

namespace {

// The package names of a Depends/Imports/LinkingTo value: "a (>= 1), b".
void add_dependencies(std::string_view value, std::vector<std::string>& names) {
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t end = value.find(',', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view item = value.substr(start, end - start);
    item = trimmed(item.substr(0, item.find('(')));
    bool plain = !item.empty() && ascii::is_alpha(item.front()) &&
                 std::all_of(item.begin(), item.end(),
                             [](char c) { return ascii::is_alnum(c) || c == '.'; });
    if (plain && item != "R") names.emplace_back(item);
    start = end + 1;
  }
}

}  // namespace

std::optional<RIndexEntry> r_index_entry(std::string_view index, std::string_view name) {
  std::optional<RIndexEntry> best;
  std::map<std::string, std::string, std::less<>> record;
  std::string* last = nullptr;  // the field a continuation line extends
  auto close_record = [&] {
    const std::string& version = record["Version"];
    if (record["Package"] == name && plain_version(version) &&
        (!best || version_less(best->version, version))) {
      best = RIndexEntry{version, {}};
      for (const char* field : {"Depends", "Imports", "LinkingTo"}) {
        add_dependencies(record[field], best->depends);
      }
    }
    record.clear();
    last = nullptr;
  };
  std::size_t start = 0;
  while (start <= index.size()) {
    std::size_t end = index.find('\n', start);
    if (end == std::string_view::npos) end = index.size();
    std::string_view line = index.substr(start, end - start);
    if (trimmed(line).empty()) {
      close_record();
    } else if (line.front() == ' ' || line.front() == '\t') {
      if (last != nullptr) *last += " " + std::string(trimmed(line));
    } else if (std::size_t colon = line.find(':'); colon != std::string_view::npos) {
      last = &(record[std::string(line.substr(0, colon))] =
                   std::string(trimmed(line.substr(colon + 1))));
    }
    start = end + 1;
  }
  close_record();
  return best;
}

Result<std::vector<RTarball>> find_r_packages(
    const EnvSources& sources, const HostSettings& settings, const std::vector<std::string>& names,
    const std::string& library, const std::string& download_dir, Clock::time_point deadline) {
  auto policy = source_policy(settings, sources.allow_private);
  if (!policy) return std::move(policy).error();
  RResolver resolver(sources, *policy, library, download_dir, deadline);
  for (const auto& name : names) {
    if (Status ok = resolver.want(name, true); !ok) return std::move(ok).error();
  }
  return resolver.take();
}

}  // namespace o4s::host
