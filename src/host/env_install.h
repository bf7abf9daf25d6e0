// The install step of `host.env` (issue 30 part 2): pip or R CMD INSTALL,
// run by the host into a staging directory, inside a bubblewrap sandbox of
// its own. It sees the read-only system layout, the staging directory
// (writable) and the local source directories (read-only): no host home, no
// store, no data directory, and no network of its own: a URL source is
// reached only through the host's install proxy (install_network.h), which
// admits that source and nothing else. It is bounded in time (the process
// group is killed at the deadline) and, on the wire, in bytes.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"
#include "host/env_sources.h"
#include "host/install_proxy.h"

namespace o4s::host {

struct InstallRun {
  std::vector<std::string> argv;       // the installer, as run inside
  std::vector<std::string> env;        // its whole environment
  std::string stage;                   // bound read-write at the same path
  std::vector<std::string> read_dirs;  // bound read-only at the same path
  std::chrono::steady_clock::time_point deadline;
  // The URL sources' origins, reached through the install proxy only; none:
  // no way out at all.
  std::vector<ProxyTarget> reach;
  EgressPolicy policy;                                  // judges each address the proxy connects to
  std::uint64_t max_bytes = 0;                          // the proxy's budget, both directions
  std::string python = "/usr/bin/python3";              // runs the forwarder
  std::vector<ProxyConnection>* connections = nullptr;  // filled when given
};

// Runs `run` in the install sandbox. A non-zero exit is an error whose
// message is the installer's last lines (what went wrong, in its words);
// the deadline passing is a kTimeout error.
Status run_installer(const InstallRun& run);

// Lets `run` reach the origins of `urls` (those the egress policy admits)
// through the install proxy, within `sources`' byte budget: the installer
// then runs under the forwarder, which sets http_proxy and https_proxy for
// it and replaces an argument equal to kInstallProxyToken
// (install_forwarder_data.h) with the proxy's URL.
Status reach_sources(InstallRun& run, const std::vector<std::string>& urls,
                     const EnvSources& sources, const HostSettings& settings);

// pip into `prefix` (a --prefix layered on `sources.python`), writing pip's
// JSON report of what it installed to `report`. URL sources go through
// the install proxy under `settings`' egress policy; what it carried lands
// in `connections`.
Status pip_install(const EnvSources& sources, const HostSettings& settings,
                   const std::string& prefix, const std::string& report,
                   const std::vector<std::string>& requirements,
                   std::chrono::steady_clock::time_point deadline,
                   std::vector<ProxyConnection>* connections);

// R CMD INSTALL of each source tarball into `library`.
Status r_install(const std::string& library, const std::vector<std::string>& tarballs,
                 const std::vector<std::string>& read_dirs,
                 std::chrono::steady_clock::time_point deadline);

}  // namespace o4s::host
