// A live worker's resource use read from procfs, for exec_peek/exec_list
// while a background job runs (its cell reports its own usage only when it
// ends).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace o4s::host_hooks {

struct ProcessUsage {
  double cpu_s = 0;                  // user + system, its reaped children included
  std::uint64_t peak_rss_bytes = 0;  // VmHWM
};

// nullopt when the process is gone or procfs does not say.
std::optional<ProcessUsage> process_usage(pid_t pid);

// The pid behind a pidfd (procfs fdinfo "Pid:", Linux 5.4); nullopt when
// the process has exited (fdinfo says -1) or procfs does not say.
std::optional<pid_t> pidfd_pid(int pidfd);

}  // namespace o4s::host_hooks
