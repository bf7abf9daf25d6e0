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

#include "base/result.h"
#include "host/env_sources.h"

namespace o4s::host {

struct HostSettings;

struct RTarball {
  std::string path;     // a local file the installer may read
  std::string version;  // from the file name or the index
  std::string source;   // where it came from: file://... or the URL
  std::string sha256;
};

// The version of `name` in a PACKAGES index (DCF records), or nullopt.
std::optional<std::string> r_index_version(std::string_view index, std::string_view name);

// `name` from the first repository that has it. A URL repository's
// tarball is downloaded into `download_dir` (bounded by the environment's
// size budget and the deadline); an unknown package, an index or tarball
// the egress policy refuses or that cannot be fetched is an error.
Result<RTarball> find_r_package(const EnvSources& sources, const HostSettings& settings,
                                const std::string& name, const std::string& download_dir,
                                std::chrono::steady_clock::time_point deadline);

}  // namespace o4s::host
