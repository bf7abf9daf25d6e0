// Where an R package of `host.env` comes from (issue 30, R sources): the
// R repositories of OPENAI4S_ENV_R_REPOS in order, each a local directory
// of source tarballs or a CRAN-like URL (its src/contrib/PACKAGES index and
// <name>_<version>.tar.gz beside it). The host downloads a URL's tarball
// itself, through the egress policy's client (web_client.h), so R CMD
// INSTALL always runs offline on a local file.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "host/env_sources.h"

namespace o4s::host {

struct HostSettings;

struct RTarball {
  std::string name;
  std::string path;     // a local file the installer may read
  std::string version;  // from the file name or the index
  std::string source;   // where it came from: file://... or the URL
  std::string sha256;
};

struct RIndexEntry {
  std::string version;
  std::vector<std::string> depends;  // Depends, Imports, LinkingTo (not R)
};

// The newest entry of `name` in a PACKAGES index (DCF records), or nullopt.
std::optional<RIndexEntry> r_index_entry(std::string_view index, std::string_view name);

// `names` from the first repository that has each, in an order R CMD
// INSTALL can install them in: a CRAN-like repository's package comes
// after the dependencies its index lists that are neither base packages
// nor installed (in the system libraries or `library`, the stage's). A
// URL repository's tarballs are downloaded into `download_dir` (each
// bounded by the environment's size budget, all by the deadline). An
// unknown package, or an index or tarball the egress policy refuses or
// that cannot be fetched, is an error.
Result<std::vector<RTarball>> find_r_packages(const EnvSources& sources,
                                              const HostSettings& settings,
                                              const std::vector<std::string>& names,
                                              const std::string& library,
                                              const std::string& download_dir,
                                              std::chrono::steady_clock::time_point deadline);

}  // namespace o4s::host
