#include "base/unique_fd.h"

#include <unistd.h>

namespace o4s {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) {
    // close() must not be retried on EINTR on Linux: the fd is already gone.
    ::close(fd_);
  }
  fd_ = fd;
}

}  // namespace o4s
