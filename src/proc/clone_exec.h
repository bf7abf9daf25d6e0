// The child half of a spawn that posix_spawn cannot express: resource limits
// and an id switch between fork and exec. It is what glibc's posix_spawn
// does itself -- clone(CLONE_VM | CLONE_VFORK) onto a private stack, the
// parent suspended until the child execs or exits -- plus setrlimit and
// setgroups/setresgid/setresuid before the exec.
//
// The child shares the parent's memory until exec, so it makes raw system
// calls only (syscall(2), never a libc wrapper): glibc's id wrappers would
// broadcast the change to the parent's threads (nptl's setxid protocol),
// and a sanitizer's interceptors (TSan's sigaction, close, _exit) would
// rewrite the parent's bookkeeping. Every handled signal is reset to its
// default before the signals the parent blocked around clone are let in.
//
// Switching ids from a CLONE_VM child also resets the dumpable flag of the
// memory it shares with the parent (the kernel's commit_creds): the parent
// restores its own flag once the child has exec'd.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "base/result.h"
#include "proc/spawn.h"

namespace o4s::proc {

// Everything the child does, in order, prepared by the parent (the child
// allocates nothing).
struct ChildPlan {
  const char* program = nullptr;  // absolute or relative path, not searched
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  std::vector<std::pair<int, int>> dups;  // dup2(from, to); from == to clears FD_CLOEXEC
  std::vector<int> closes;                // then closed (whether open or not)
  int close_from = 3;                     // then every descriptor from this one up
  const char* cwd = nullptr;
  sigset_t default_signals{};  // set to SIG_DFL even when ignored
  std::vector<ChildLimit> limits;
  const ChildCredentials* credentials = nullptr;
  bool subreaper = false;  // PR_SET_CHILD_SUBREAPER, which exec keeps
};

// Starts the child in a new session with an empty signal mask; returns its
// pid once it has exec'd. A failing step (a limit refused, the ids, exec)
// comes back as the error, naming the step, and the child is reaped.
Result<pid_t> clone_exec(const ChildPlan& plan);

// The child's way to close descriptors on kernels without close_range
// (before 5.9): each one /proc/self/fd lists, from `first` up, with raw
// system calls and no allocation. False when /proc cannot be read. Exposed
// for its test; only the child calls it.
bool close_listed_fds_from(unsigned first);

}  // namespace o4s::proc
