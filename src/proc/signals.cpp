#include "proc/signals.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace o4s::proc {

bool signal_main_thread(pid_t pid, int signum) {
  if (pid <= 0) return false;
  // SYS_tgkill is the platform's own number (234 on x86_64, 131 on aarch64).
  return ::syscall(SYS_tgkill, pid, pid, signum) == 0;
}

Result<UniqueFd> open_pidfd(pid_t pid) {
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return system_error("pidfd_open", errno);
  return UniqueFd(static_cast<int>(fd));
}

Status send_signal_via_pidfd(int pidfd, int signum) {
  if (::syscall(SYS_pidfd_send_signal, pidfd, signum, nullptr, 0) != 0) {
    return system_error("pidfd_send_signal", errno);
  }
  return {};
}

}  // namespace o4s::proc
