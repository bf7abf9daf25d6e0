// Helpers for tests that run real processes: paths of the helper programs,
// bounded waits, /proc inspection, and a scratch directory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proc/child_process.h"
#include "proc/spawn.h"
#include "support/temp_dir.h"

namespace o4s::testing {

using namespace std::chrono_literals;

// The helper programs in tests/cpp/testprogs: the C++ probe, a Python worker
// that speaks the protocol, and one that never answers the handshake.
std::string probe_path();
std::string fake_worker_path();
std::string silent_worker_path();

// A spawn request for `probe <args...>` with a minimal environment.
proc::SpawnRequest probe_request(std::vector<std::string> args);

// Takes ownership of a freshly spawned child through a new pidfd (aborts the
// test binary if the pidfd cannot be opened: nothing else would reap it).
std::unique_ptr<proc::ChildProcess> adopt(pid_t pid);

// Polls `done` every `step` until it holds or `timeout` passes. For states
// the kernel offers no wait primitive for (a grandchild's death).
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step = 5ms);

// The state letter of /proc/<pid>/stat ('R', 'S', 'Z', ...), nullopt when the
// process is gone.
std::optional<char> process_state(pid_t pid);
// Still executing: present and neither a zombie nor dead. A zombie counts as
// dead because an init that never reaps (as in some sandboxes) leaves killed
// orphans as zombies forever.
bool process_running(pid_t pid);

// One '\n'-terminated line from a blocking fd (without the '\n'), or nullopt
// on end of stream or when `timeout` passes first.
std::optional<std::string> read_line_with_timeout(int fd, std::chrono::milliseconds timeout);
// Everything until end of stream; nullopt when `timeout` passes first.
std::optional<std::string> read_all_with_timeout(int fd, std::chrono::milliseconds timeout);

// A hex mask field (SigIgn, SigBlk, ...) from /proc/<pid>/status text.
std::optional<std::uint64_t> status_mask(const std::string& status_text, const std::string& field);
inline bool mask_has(std::uint64_t mask, int signum) { return (mask >> (signum - 1)) & 1U; }

}  // namespace o4s::testing
