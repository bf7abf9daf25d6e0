// The seccomp policy of a sandboxed worker: a deny list of what a science
// cell never needs, answered with an errno (EPERM; ENOSYS for clone3) rather
// than a kill, so a library probing a feature gets a clean failure and the
// kernel survives. Compiled once per process with libseccomp, exported as a
// classic-BPF program that bubblewrap loads (--seccomp <fd>) just before it
// executes the worker.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::sandbox {

// The syscalls denied outright (arguments are not inspected).
const std::vector<std::string_view>& denied_syscalls();

// The compiled program (struct sock_filter[]), built on first use.
Result<std::shared_ptr<const std::string>> seccomp_program();

// A fresh sealed memfd holding the program at offset 0, for one spawn (bwrap
// reads it to end of file, so a descriptor serves exactly one sandbox).
Result<UniqueFd> seccomp_program_fd();

// One line for the status: what the filter does.
std::string seccomp_summary();

}  // namespace o4s::sandbox
