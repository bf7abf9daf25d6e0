// Finding and pinning the worker inside a bubblewrap PID namespace.
//
// The spawn returns bubblewrap's own pid (the launcher). With --unshare-pid
// the launcher clones a namespace init (reported through --info-fd), and the
// init forks the one process that executes the worker program. Interrupts and
// the self-test must address that process, not the launcher: it is pinned
// with a pidfd, so a signal can never reach a recycled pid, and the chain
// launcher -> init -> worker is verified through procfs PPid before and after
// each pidfd is opened.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::sandbox {

struct PinnedWorker {
  pid_t init_pid = -1;
  UniqueFd init_pidfd;
  pid_t worker_pid = -1;  // host pid
  UniqueFd worker_pidfd;
};

// Parses bwrap's --info-fd document ({"child-pid": N, ...}, at most 4096
// bytes), reading until it is complete, end of stream or the deadline.
Result<pid_t> read_info_child_pid(int fd, std::chrono::milliseconds timeout);

// Pins the init and its sole child, then waits until that child no longer
// runs the launcher's executable (it has executed the worker program, and
// bubblewrap has installed the seccomp filter, which it does just before).
Result<PinnedWorker> pin_worker(pid_t launcher_pid, pid_t init_pid,
                                std::chrono::milliseconds timeout);

// True once the process behind `pidfd` has exited (a pidfd polls readable).
bool pidfd_exited(int pidfd);

// The parent pid procfs reports, nullopt when the process is gone.
std::optional<pid_t> parent_of(pid_t pid);

// SIGINT and friends for the worker's MAIN thread, where CPython runs signal
// handlers: pidfd_send_signal(PIDFD_SIGNAL_THREAD) (Linux 6.9), else tgkill on
// the pinned pid after confirming through the pidfd that it is still ours.
// The error message is the "interrupt gap" reason the manager reports.
Status signal_worker_main_thread(const PinnedWorker& worker, int signum);

}  // namespace o4s::sandbox
