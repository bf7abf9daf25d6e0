// Making a pipe whose two ends are owned (UniqueFd) and close on exec, so a
// child spawned meanwhile by another thread cannot inherit either end; a
// child that should get one has it dup2'ed to a chosen number, which clears
// the flag on the copy only.
#pragma once

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s {

// pipe2(O_CLOEXEC | extra_flags); `extra_flags` may add O_NONBLOCK or
// O_DIRECT. A failure is "pipe2: EMFILE" with errno kept.
Result<PipePair> make_pipe(int extra_flags = 0);

}  // namespace o4s
