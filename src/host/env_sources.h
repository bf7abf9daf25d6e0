// Where `host.env` installs come from, and the one check every URL source
// passes (issue 30 part 2). Sources are configured by the embedder, never by
// the cell: a pip index URL, find-links directories or URLs, and R
// repositories (local directories of source tarballs, or CRAN-like URLs).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace o4s::host {

struct HostSettings;

// The variables the front doors copy into HostSettings::env_install.
//   OPENAI4S_ENV_PIP_INDEX_URL       a pip index URL (default: none, offline)
//   OPENAI4S_ENV_FIND_LINKS          comma-separated directories or URLs of
//                                    wheels and sdists
//   OPENAI4S_ENV_R_REPOS             comma-separated R repositories: directories
//                                    of source packages (<name>_<version>.tar.gz)
//                                    or CRAN-like URLs (src/contrib/PACKAGES)
//   OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES  1: a URL source may be a loopback or
//                                    private address (refused by default)
//   OPENAI4S_ENV_TIMEOUT             seconds one install may take (600)
//   OPENAI4S_ENV_MAX_BYTES           size budget of one environment (2G)
//   OPENAI4S_ENV_PYTHON              the interpreter pip runs under and the
//                                    kernels' (default /usr/bin/python3)
inline constexpr std::array<std::string_view, 7> kEnvInstallVariables = {
    "OPENAI4S_ENV_PIP_INDEX_URL", "OPENAI4S_ENV_FIND_LINKS",
    "OPENAI4S_ENV_R_REPOS",       "OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES",
    "OPENAI4S_ENV_TIMEOUT",       "OPENAI4S_ENV_MAX_BYTES",
    "OPENAI4S_ENV_PYTHON"};

struct EnvSources {
  std::string pip_index_url;
  std::vector<std::string> find_links;  // directories and URLs
  std::vector<std::string> r_repos;     // directories and URLs
  bool allow_private = false;
  double timeout_s = 600;
  std::uint64_t max_bytes = std::uint64_t{2} << 30;
  std::string python = "/usr/bin/python3";

  bool any_url() const;
  // For the audit and list: "index <url>; find-links <a>, <b>; r-repos <c>".
  std::string describe() const;
};

// Parsed from the variables above; a malformed value is an error naming it.
Result<EnvSources> env_sources_from(const std::map<std::string, std::string>& variables);

bool is_url(std::string_view source);

// Every URL source goes through here before an installer may use it: not
// a loopback, link-local or private address unless `allow_private`, then
// an http(s) URL the egress policy (egress_policy.h) lets through.
Status check_source_url(std::string_view url, const HostSettings& settings, bool allow_private);

}  // namespace o4s::host
