// Resident memory of a worker and everything under it (issue 28: pooled and
// standby workers are reported like kernels). One walk for every consumer:
// the MCP server's list_kernels, openai4s.KernelPool.memory() and the bench.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace o4s::kernel {

// VmRSS of `pid` and its descendants, in bytes: a sandboxed worker's tree
// (the launcher, bubblewrap and the interpreter in its pid namespace) is
// followed through /proc/<pid>/task/<tid>/children. 0 for a process gone;
// a child that exits during the walk is skipped.
std::uint64_t tree_rss_bytes(pid_t pid);

}  // namespace o4s::kernel
