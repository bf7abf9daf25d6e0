// The only way out of an install sandbox (issue 30 part 2). The sandbox
// has no network of its own (loopback only); a forwarder inside it
// (install_forwarder.py) relays pip's proxy connections to this proxy's
// unix socket, bound into the sandbox. The proxy admits only the install's
// configured sources (install_proxy_admission.h), resolves each name
// itself, judges every address with the egress policy and connects to
// exactly the addresses it judged (no DNS rebinding), stops at the
// install's byte budget and deadline, and keeps a record of every
// connection for the install's audit row. It runs on a thread of its own
// for the length of one install.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "host/install_proxy_admission.h"

namespace o4s::host {

struct InstallProxyConfig {
  std::vector<ProxyTarget> targets;
  EgressPolicy policy;          // judges each resolved address
  std::uint64_t max_bytes = 0;  // all connections together, both directions
  std::chrono::steady_clock::time_point deadline;
};

// One connection the installer opened, as the audit row shows it.
struct ProxyConnection {
  std::string method;   // "CONNECT", "GET", ... ("" when the head was unreadable)
  std::string target;   // "host:port" as asked
  std::string address;  // the address connected to, when it got that far
  bool allowed = false;
  std::string reason;           // why refused or cut short; "" for a clean end
  std::uint64_t bytes_out = 0;  // installer -> source
  std::uint64_t bytes_in = 0;   // source -> installer
};

class InstallProxy {
 public:
  // Listens on a new unix socket at `socket_path` (its directory must be
  // private to this host process) and serves until stop().
  static Result<std::unique_ptr<InstallProxy>> start(InstallProxyConfig config,
                                                     const std::string& socket_path);
  ~InstallProxy();
  InstallProxy(const InstallProxy&) = delete;
  InstallProxy& operator=(const InstallProxy&) = delete;

  // Closes every connection, joins the thread and returns the records.
  std::vector<ProxyConnection> stop();

  struct State;

 private:
  explicit InstallProxy(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  std::thread thread_;
};

}  // namespace o4s::host
