// The install step of `host.env` (issue 30 part 2): pip or R CMD INSTALL,
// run by the host into a staging directory, inside a bubblewrap sandbox of
// its own. It sees the read-only system layout, the staging directory
// (writable) and the local source directories (read-only): no host home, no
// store, no data directory, no network unless a URL source needs it. It is
// bounded in time (the process group is killed at the deadline).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"
#include "host/env_sources.h"

namespace o4s::host {

struct InstallRun {
  std::vector<std::string> argv;       // the installer, as run inside
  std::vector<std::string> env;        // its whole environment
  std::string stage;                   // bound read-write at the same path
  std::vector<std::string> read_dirs;  // bound read-only at the same path
  bool network = false;                // keep the host network
  std::chrono::steady_clock::time_point deadline;
};

// Runs `run` in the install sandbox. A non-zero exit is an error whose
// message is the installer's last lines (what went wrong, in its words);
// the deadline passing is a kTimeout error.
Status run_installer(const InstallRun& run);

// pip into `prefix` (a --prefix layered on `sources.python`), writing pip's
// JSON report of what it installed to `report`.
Status pip_install(const EnvSources& sources, const std::string& prefix, const std::string& report,
                   const std::vector<std::string>& requirements,
                   std::chrono::steady_clock::time_point deadline);

// R CMD INSTALL of each source tarball into `library`.
Status r_install(const std::string& library, const std::vector<std::string>& tarballs,
                 const std::vector<std::string>& read_dirs,
                 std::chrono::steady_clock::time_point deadline);

}  // namespace o4s::host
