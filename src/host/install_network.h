// The network an install from URL sources gets (issue 30 part 2): a private
// host directory holding the install proxy's unix socket and the
// forwarder, bound read-only into the install sandbox, whose own network
// namespace has loopback only. Owned for one install: the destructor stops
// the proxy and removes the directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "host/install_proxy.h"

namespace o4s::host {

class InstallNetwork {
 public:
  // `python` runs the forwarder inside the sandbox.
  static Result<std::unique_ptr<InstallNetwork>> open(InstallProxyConfig config,
                                                      std::string python);
  ~InstallNetwork();
  InstallNetwork(const InstallNetwork&) = delete;
  InstallNetwork& operator=(const InstallNetwork&) = delete;

  // The directory to bind into the sandbox at the same path.
  const std::string& dir() const { return dir_; }
  // `installer` run under the forwarder; an argument equal to
  // kInstallProxyToken becomes the proxy's URL inside the sandbox.
  std::vector<std::string> wrap(const std::vector<std::string>& installer) const;
  // Stops the proxy; every connection the install opened.
  std::vector<ProxyConnection> finish();

 private:
  InstallNetwork(std::string dir, std::string python)
      : dir_(std::move(dir)), python_(std::move(python)) {}
  std::string dir_;
  std::string python_;
  std::unique_ptr<InstallProxy> proxy_;
};

}  // namespace o4s::host
