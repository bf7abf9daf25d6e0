#include "host/install_network.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "host/install_forwarder_data.h"

namespace o4s::host {

namespace {

constexpr const char* kSocketName = "/proxy.sock";
constexpr const char* kForwarderName = "/forwarder.py";

}  // namespace

Result<std::unique_ptr<InstallNetwork>> InstallNetwork::open(InstallProxyConfig config,
                                                             std::string python) {
  // Under /tmp, not TMPDIR: a unix socket's path must stay under 108 bytes.
  // The sandbox's own /tmp is a tmpfs; this directory is bound over it.
  std::string pattern = "/tmp/openai4s-install-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return system_error("mkdtemp " + pattern, errno);
  std::unique_ptr<InstallNetwork> network(new InstallNetwork(pattern, std::move(python)));
  {
    std::ofstream out(network->dir_ + kForwarderName);
    out << kInstallForwarderPy;
    if (!out.flush()) {
      return make_error(ErrorCode::kSystem, "cannot write the install forwarder into " + pattern);
    }
  }
  auto proxy = InstallProxy::start(std::move(config), network->dir_ + kSocketName);
  if (!proxy) return std::move(proxy).error();
  network->proxy_ = std::move(proxy.value());
  return network;
}

InstallNetwork::~InstallNetwork() {
  finish();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::vector<std::string> InstallNetwork::wrap(const std::vector<std::string>& installer) const {
  std::vector<std::string> argv = {
      python_, "-I", dir_ + kForwarderName, dir_ + kSocketName, kInstallProxyToken, "--"};
  argv.insert(argv.end(), installer.begin(), installer.end());
  return argv;
}

std::vector<ProxyConnection> InstallNetwork::finish() {
  return proxy_ ? proxy_->stop() : std::vector<ProxyConnection>{};
}

}  // namespace o4s::host
