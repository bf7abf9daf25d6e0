// Reading a whole file, or a descriptor to its end, into memory. For the
// small files the host reads (procfs entries, cgroup knobs, a built seccomp
// program), not for streaming large ones.
#pragma once

#include <string>

#include "base/result.h"

namespace o4s {

// The bytes of the file at `path`, opened O_CLOEXEC. Failures keep errno:
// "open <path>: ENOENT", "read <path>: EIO".
Result<std::string> read_file(const std::string& path);

// Everything left to read on `fd` from its current offset, retrying EINTR;
// `what` names the source in a failure ("read <what>: EBADF").
Result<std::string> read_to_end(int fd, const std::string& what);

}  // namespace o4s
