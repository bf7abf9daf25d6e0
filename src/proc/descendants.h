// Ending what a worker started when no PID namespace or cgroup holds it
// (the sandbox off). Two ways to find such processes:
//
// - The tree below the worker. The worker is a child subreaper
//   (SpawnRequest::subreaper), so a process whose parent exits -- a double
//   fork, `setsid cmd &` from a shell -- re-parents to the worker instead of
//   init and stays in the tree the host walks through
//   /proc/<pid>/task/<tid>/children (Linux 3.5, CONFIG_PROC_CHILDREN).
// - A mark in the initial environment (SpawnRequest::descendant_mark). Once
//   the worker itself has died (killed, crashed) its orphans have gone up to
//   init and the tree is lost; what still carries the worker's mark in
//   /proc/<pid>/environ is its leftover. A process that execs with a scrubbed
//   environment after its worker died is out of reach: only a cgroup or a PID
//   namespace (the sandbox) closes that gap.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace o4s::proc {

struct Descendant {
  pid_t pid = -1;
  pid_t parent = -1;  // as the walk found it; rechecked before each signal
};

// The live (not zombie) processes below `root`, parents before children;
// root itself is not included. Empty when root is gone.
std::vector<Descendant> live_descendants(pid_t root);

// Freezes everything below `root` with SIGSTOP (walking again until a walk
// finds nobody new: a stopped process cannot fork, and what one forked
// before it stopped shows up on the next walk), then SIGKILLs it and walks
// until nothing below root is alive or `budget` is spent. Returns how many
// processes it signalled. Root itself is left alone.
std::size_t kill_descendants(pid_t root, std::chrono::milliseconds budget);

// SIGKILLs every process but this one whose initial environment holds the
// exact entry `mark` ("NAME=value"), scanning /proc again until none is
// alive or `budget` is spent. Returns how many it signalled.
std::size_t kill_marked(const std::string& mark, std::chrono::milliseconds budget);

}  // namespace o4s::proc
