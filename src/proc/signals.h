// Thread- and process-directed signal helpers at the OS boundary.
#pragma once

#include <sys/types.h>

#include "base/result.h"
#include "base/unique_fd.h"

namespace o4s::proc {

// tgkill(pid, pid, sig): aims the signal at the process's main thread (whose
// tid equals the pid). CPython runs Python-level handlers only on the main
// thread, and a process-directed signal may be taken by any helper thread
// (an OpenBLAS pool), leaving a main thread in sleep() unwoken.
bool signal_main_thread(pid_t pid, int signum);

// pidfd_open (Linux 5.3). The fd is created close-on-exec by the kernel.
Result<UniqueFd> open_pidfd(pid_t pid);

// pidfd_send_signal (Linux 5.1): cannot hit a recycled pid.
Status send_signal_via_pidfd(int pidfd, int signum);

}  // namespace o4s::proc
