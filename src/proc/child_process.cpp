#include "proc/child_process.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "base/file_io.h"
#include "proc/descendants.h"
#include "proc/signals.h"

namespace o4s::proc {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

ChildProcess::ChildProcess(pid_t pid, UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}

ChildProcess::~ChildProcess() {
  if (poll().has_value()) {
    return;
  }
  kill_group();
  if (!reap(false).has_value()) {
    // Unkillable for now (uninterruptible sleep): reap in the background
    // rather than block the owner or leave a zombie behind.
    std::thread([pid = pid_] { ::waitpid(pid, nullptr, 0); }).detach();
  }
}

std::optional<int> ChildProcess::reap(bool block) {
  if (block) {
    while (!wait_exit(milliseconds(60'000))) {
    }
  } else if (!exited()) {
    std::lock_guard lock(mutex_);
    return returncode_;
  }
  std::lock_guard lock(mutex_);
  if (returncode_) return returncode_;
  // The leader has exited but is not reaped, so its group id cannot have been
  // recycled: end whatever the cell left running in the group before letting
  // the id go. A worker's group never outlives its reaping.
  ::killpg(pgid(), SIGKILL);
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, 0);
  } while (got < 0 && errno == EINTR);
  if (got == pid_) {
    returncode_ = WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
  } else {
    returncode_ = 0;  // reaped elsewhere (a SIGCHLD=SIG_IGN host); nothing to wait for
  }
  // What the child orphaned as it died went up to init, out of its tree
  // and group (a setsid'd daemon): the mark still finds it.
  kill_marked(descendant_mark_, milliseconds(2000));
  return returncode_;
}

std::optional<int> ChildProcess::poll() { return reap(false); }

bool ChildProcess::wait_exit(milliseconds timeout) const {
  pollfd p{pidfd_.get(), POLLIN, 0};
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    int rc = ::poll(&p, 1, static_cast<int>(std::max<long>(0, left.count())));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

std::optional<int> ChildProcess::wait(std::optional<milliseconds> timeout) {
  if (auto code = poll()) return code;
  if (!timeout) return reap(true);
  if (!wait_exit(*timeout)) return std::nullopt;
  return reap(true);
}

Status ChildProcess::send_signal(int signum) {
  if (poll().has_value()) return make_error(ErrorCode::kNotAlive, "the worker had already exited");
  return send_signal_via_pidfd(pidfd_.get(), signum);
}

namespace {

// True when some member of the process group is still running. killpg(0)
// alone also counts zombies, and a grandchild reparented to a PID 1 that does
// not reap (common in containers) stays one forever: a SIGKILLed group would
// look alive for the whole confirmation wait.
bool group_has_live_member(pid_t pgid) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return true;  // cannot tell: assume alive
  bool live = false;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    auto stat = read_file(std::string("/proc/") + entry->d_name + "/stat");
    if (!stat) continue;
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parens.
    const char* close = std::strrchr(stat->c_str(), ')');
    char state = 0;
    int ppid = 0;
    int pgrp = 0;
    if (close == nullptr || std::sscanf(close + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
      continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') {
      live = true;
      break;
    }
  }
  ::closedir(proc);
  return live;
}

}  // namespace

bool ChildProcess::group_alive() const {
  if (::killpg(pgid(), 0) != 0 && errno != EPERM) return false;
  return group_has_live_member(pgid());
}

void ChildProcess::kill_group(milliseconds confirm) {
  bool leader_reaped;
  {
    std::lock_guard lock(mutex_);
    leader_reaped = returncode_.has_value();
  }
  // Once the leader is reaped its group id may be recycled; only then do we
  // fall back to signalling nothing but what we can still prove is ours.
  if (!leader_reaped) {
    // Descendants first: a leader killed first would hand its orphans to
    // init. Stopped, it cannot start new ones while its tree is walked.
    if (!descendant_mark_.empty() && !exited()) {
      (void)send_signal_via_pidfd(pidfd_.get(), SIGSTOP);
      end_descendants(confirm);
    }
    if (::killpg(pgid(), SIGKILL) != 0) {
      (void)send_signal_via_pidfd(pidfd_.get(), SIGKILL);
    }
  }
  auto deadline = Clock::now() + confirm;
  while (Clock::now() < deadline) {
    // Reaping the leader keeps a zombie from making the group look alive.
    poll();
    if (!group_alive()) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  poll();
}

void ChildProcess::end_descendants(milliseconds budget) {
  if (descendant_mark_.empty() || exited()) return;
  kill_descendants(pid_, budget);
}

}  // namespace o4s::proc
