#include "base/pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace o4s {

Result<PipePair> make_pipe(int extra_flags) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | extra_flags) != 0) return system_error("pipe2", errno);
  return PipePair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace o4s
