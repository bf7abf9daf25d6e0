// One child process started with posix_spawn: pipes, new session, default
// signal dispositions, empty signal mask, exec failure reported to the caller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::proc {

// A per-process limit the child sets on itself before exec (soft = hard).
struct ChildLimit {
  int resource = 0;  // RLIMIT_*
  std::uint64_t value = 0;
};

// The ids the child switches to before exec, supplementary groups cleared.
struct ChildCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
};

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is resolved against env's PATH
  std::vector<std::string> env;   // "NAME=value" entries, used as is
  std::optional<std::string> cwd;
  std::vector<int> pass_fds;  // borrowed; inherited by the child at the same number
  // Set in the child after its descriptors and before exec, limits first
  // (while it still has the daemon's privileges), then the ids. posix_spawn
  // can do neither, so a request with either starts through clone_exec
  // (clone_exec.h) instead: a root daemon drops to the sandbox uid this way
  // without exec'ing a helper (setpriv, prlimit) first.
  std::vector<ChildLimit> limits;
  std::optional<ChildCredentials> credentials;
  // The child becomes a child subreaper (PR_SET_CHILD_SUBREAPER, kept across
  // exec, Linux 3.4): what it starts and then orphans re-parents to it, not
  // to init, so the host can still find it below the child (descendants.h).
  // A request with it starts through clone_exec, as one with limits does.
  bool subreaper = false;
  // An entry of `env` unique to this child ("NAME=value"), which everything
  // it starts inherits: what is left of the child's processes once it has
  // died (descendants.h). Empty: none. The spawn itself ignores it.
  std::string descendant_mark;
};

struct SpawnedPipes {
  pid_t pid = -1;
  UniqueFd stdin_write;
  UniqueFd stdout_read;
  UniqueFd stderr_read;
};

// Runs posix_spawn (glibc: clone(CLONE_VM|CLONE_VFORK) + exec, so nothing but
// async-signal-safe work happens in the child, and an exec failure comes back
// as this function's error), or clone_exec when the request has limits or
// credentials; the child sees the same either way. Every fd this creates is
// close-on-exec.
Result<SpawnedPipes> spawn_with_pipes(const SpawnRequest& request);

// Resolves a bare program name the way execvp would, but against the child's
// PATH (taken from env), not the parent's.
std::string resolve_program(const std::string& program, const std::vector<std::string>& env);

}  // namespace o4s::proc
