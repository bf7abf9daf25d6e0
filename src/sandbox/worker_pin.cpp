#include "sandbox/worker_pin.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "base/file_io.h"
#include "proc/signals.h"

namespace o4s::sandbox {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Linux 6.9 (include/uapi/linux/pidfd.h); older headers lack it.
constexpr unsigned kPidfdSignalThread = 1U << 0;
constexpr std::size_t kInfoLimit = 4096;
constexpr milliseconds kPollStep(1);

std::optional<std::string> exe_of(pid_t pid) {
  char target[4096];
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  if (n <= 0) return std::nullopt;
  return std::string(target, static_cast<std::size_t>(n));
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  std::string id = std::to_string(pid);
  auto text = read_file("/proc/" + id + "/task/" + id + "/children");
  if (!text) return children;
  std::istringstream in(*text);
  long child = 0;
  while (in >> child) children.push_back(static_cast<pid_t>(child));
  return children;
}

// Opens a pidfd on `pid` and proves it is the child of `parent` by checking
// PPid after the open: `parent` is pinned (unreaped or held by a pidfd), so
// the pid it names as its child cannot have been recycled in between.
Result<UniqueFd> pin_child(pid_t pid, pid_t parent, const char* what) {
  if (parent_of(pid) != parent) {
    return make_error(ErrorCode::kSandboxUnavailable,
                      std::string("procfs did not confirm the sandbox ") + what);
  }
  auto pidfd = proc::open_pidfd(pid);
  if (!pidfd) return std::move(pidfd).error();
  if (parent_of(pid) != parent) {
    return make_error(ErrorCode::kSandboxUnavailable,
                      std::string("the sandbox ") + what + " changed while being pinned");
  }
  return pidfd;
}

}  // namespace

std::optional<pid_t> parent_of(pid_t pid) {
  auto status = read_file("/proc/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  std::size_t at = status->find("\nPPid:");
  if (at == std::string::npos) return std::nullopt;
  return static_cast<pid_t>(std::strtol(status->c_str() + at + 6, nullptr, 10));
}

bool pidfd_exited(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

Result<pid_t> read_info_child_pid(int fd, milliseconds timeout) {
  std::string text;
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      return make_error(ErrorCode::kTimeout, "bubblewrap did not report its namespace init");
    }
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return system_error("poll bubblewrap info", errno);
    if (ready == 0) continue;
    char buffer[1024];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("read bubblewrap info", errno);
    if (n > 0) text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kInfoLimit) {
      return make_error(ErrorCode::kProtocol, "bubblewrap's info document is too large");
    }
    // bwrap writes the document in one go; parse as soon as it is whole
    // rather than wait for end of stream.
    auto json = nlohmann::json::parse(text, nullptr, false);
    if (!json.is_discarded()) {
      auto found = json.find("child-pid");
      if (found == json.end() || !found->is_number_integer() || found->get<long>() <= 0) {
        return make_error(ErrorCode::kProtocol, "bubblewrap's info document names no child-pid");
      }
      return static_cast<pid_t>(found->get<long>());
    }
    if (n == 0) {
      return make_error(ErrorCode::kSandboxUnavailable,
                        "bubblewrap exited before reporting its namespace init");
    }
  }
}

Result<PinnedWorker> pin_worker(pid_t launcher_pid, pid_t init_pid, milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  PinnedWorker pinned;
  pinned.init_pid = init_pid;
  auto init = pin_child(init_pid, launcher_pid, "init");
  if (!init) return std::move(init).error();
  pinned.init_pidfd = std::move(init.value());
  auto launcher_exe = exe_of(launcher_pid);
  if (!launcher_exe) {
    return make_error(ErrorCode::kSandboxUnavailable, "bubblewrap exited while starting");
  }

  while (Clock::now() < deadline) {
    if (pidfd_exited(pinned.init_pidfd.get())) {
      return make_error(ErrorCode::kSandboxUnavailable,
                        "the sandbox ended before its worker started");
    }
    if (!pinned.worker_pidfd) {
      auto children = children_of(init_pid);
      if (children.size() > 1) {
        return make_error(ErrorCode::kSandboxUnavailable,
                          "procfs did not name one direct worker child");
      }
      if (children.size() == 1) {
        auto worker = pin_child(children.front(), init_pid, "worker");
        if (!worker) return std::move(worker).error();
        pinned.worker_pid = children.front();
        pinned.worker_pidfd = std::move(worker.value());
      }
    }
    if (pinned.worker_pidfd) {
      if (pidfd_exited(pinned.worker_pidfd.get())) {
        return make_error(ErrorCode::kSandboxUnavailable,
                          "the worker exited as it started inside the sandbox");
      }
      // Until exec, the forked child still runs bubblewrap's executable.
      auto exe = exe_of(pinned.worker_pid);
      if (exe && *exe != *launcher_exe) return pinned;
    }
    std::this_thread::sleep_for(kPollStep);
  }
  return make_error(ErrorCode::kSandboxUnavailable,
                    pinned.worker_pidfd ? "the sandboxed worker did not execute its program in time"
                                        : "bubblewrap did not provide a pinned command identity");
}

Status signal_worker_main_thread(const PinnedWorker& worker, int signum) {
  if (!worker.worker_pidfd) {
    return make_error(ErrorCode::kNotAlive, "bubblewrap did not provide a pinned command identity");
  }
  if (::syscall(SYS_pidfd_send_signal, worker.worker_pidfd.get(), signum, nullptr,
                kPidfdSignalThread) == 0) {
    return {};
  }
  int err = errno;
  if (err == ESRCH) {
    return make_error(ErrorCode::kNotAlive,
                      "the worker exited between being pinned and being signalled");
  }
  if (err != EINVAL) {
    return make_error(ErrorCode::kSystem, "the pinned worker did not accept the signal (" +
                                              system_error("pidfd_send_signal", err).message + ")");
  }
  // Before Linux 6.9 a pidfd cannot aim at one thread. The pid is safe to
  // use while the pidfd shows the process alive: a pid is recycled only
  // after its process is reaped, and reuse also needs the pid counter to wrap.
  if (pidfd_exited(worker.worker_pidfd.get())) {
    return make_error(ErrorCode::kNotAlive,
                      "the worker exited between being pinned and being signalled");
  }
  if (!proc::signal_main_thread(worker.worker_pid, signum)) {
    return make_error(ErrorCode::kSystem, "the pinned worker did not accept the signal (" +
                                              system_error("tgkill", errno).message + ")");
  }
  return {};
}

}  // namespace o4s::sandbox
