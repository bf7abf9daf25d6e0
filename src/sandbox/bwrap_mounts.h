// The per-kernel filesystem of one bubblewrap launch: the worker's runtime
// read-only, the workspace read-write, the host's store masked where a
// visible tree holds it, the host exchange directories, a private home.
// Every bind source goes to bubblewrap as a descriptor the plan opened: as
// the sandbox uid, bubblewrap may not be able to walk to it (root's 0700
// directories, pytest's too).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/sandbox_identity.h"
#include "sandbox/self_test.h"
#include "sandbox/workspace_path.h"

namespace o4s::sandbox {

class MountPlan {
 public:
  // Adds its operations to `command` and what the self-test must then see
  // to `expect`; both outlive the plan.
  MountPlan(BwrapCommand& command, SelfTestExpectations& expect, const SandboxIdentity& identity,
            std::string workspace);

  // The runtime roots (and extra read paths), read-only, each opened to the
  // sandbox uid; refused when one of them is the workspace.
  Status bind_runtime(const std::vector<std::string>& readable);
  // The workspace itself, through the directory held since it was checked.
  Status bind_workspace(const HeldPath& held);
  // An empty read-only directory over each hidden path a visible tree holds.
  Status mask_hidden(const std::vector<std::string>& hidden, std::uint64_t tmpfs_bytes);
  Status bind_exchange_dirs(const std::vector<std::string>& dirs);
  // A private tmpfs over the host home, unless the workspace exposes it.
  void mask_home(const std::optional<std::string>& home, std::uint64_t tmpfs_bytes);

  // /etc/passwd, /etc/group and /etc/hosts of the sandbox's own (account_files.h).
  Status identity_files(const std::optional<std::string>& home);

  // The bind sources, to keep open until bubblewrap has run.
  std::vector<UniqueFd> take_sources() { return std::move(sources_); }

 private:
  Result<int> open_source(const std::string& path);
  Result<int> held_source(const HeldPath& path);
  Result<int> held_fd(const std::string& path);
  bool visible(const std::string& path) const;
  Status refuse_unsafe_host_path(const std::string& hidden) const;
  Status pin_between(const std::string& resolved,
                     const std::vector<std::pair<std::string, std::string>>& hidden);

  BwrapCommand& command_;
  SelfTestExpectations& expect_;
  const SandboxIdentity& identity_;
  std::string workspace_;
  std::vector<std::string> visible_;
  std::vector<UniqueFd> sources_;
};

}  // namespace o4s::sandbox
