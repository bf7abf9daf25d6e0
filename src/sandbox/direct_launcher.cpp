#include <poll.h>

#include <string>
#include <string_view>

#include "base/random_id.h"
#include "base/unique_fd.h"
#include "proc/signals.h"
#include "sandbox/launcher.h"
#include "sandbox/worker_cgroup.h"

namespace o4s::sandbox {

namespace {

// The worker's mark (proc/descendants.h), before its unique value. Not an
// OPENAI4S_ setting: the launcher sets it, and only the host's scan reads it.
constexpr std::string_view kMarkPrefix = "O4S_WORKER_MARK=";

class DirectLaunch final : public PreparedLaunch {
 public:
  DirectLaunch(proc::SpawnRequest request, DirectLauncher& launcher)
      : request_(std::move(request)), launcher_(launcher) {}
  const proc::SpawnRequest& request() const override { return request_; }
  Result<LaunchOutcome> finish(const SpawnedLauncher& spawned) override {
    launcher_.contain(spawned.pid);
    return LaunchOutcome{};
  }

 private:
  proc::SpawnRequest request_;
  DirectLauncher& launcher_;
};

bool exited(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

}  // namespace

struct DirectLauncher::Contained {
  UniqueFd worker;  // a pidfd: polls readable once the worker has exited
  std::unique_ptr<WorkerCgroup> cgroup;
};

DirectLauncher::DirectLauncher() = default;
DirectLauncher::~DirectLauncher() = default;

// No PID namespace: the worker is made a subreaper, so its tree keeps what
// it orphans, and marked, so what a dead worker orphaned is still found.
// ChildProcess ends both (docs/sandbox.md).
Result<std::unique_ptr<PreparedLaunch>> DirectLauncher::prepare(const LaunchSpec& spec) {
  end_exited_workers();
  proc::SpawnRequest request = spec.request;
  request.subreaper = true;
  request.descendant_mark.assign(kMarkPrefix);
  request.descendant_mark += uuid4();
  std::erase_if(request.env,
                [](const std::string& entry) { return entry.starts_with(kMarkPrefix); });
  request.env.push_back(request.descendant_mark);
  return std::unique_ptr<PreparedLaunch>(new DirectLaunch(std::move(request), *this));
}

void DirectLauncher::contain(pid_t pid) {
  auto cgroup = WorkerCgroup::create();
  if (!cgroup || !cgroup.value()->attach(pid)) return;  // not ours to make: the mark must do
  auto pidfd = proc::open_pidfd(pid);
  if (!pidfd) return;  // already gone: the cgroup is emptied and removed now
  std::lock_guard lock(mutex_);
  contained_.push_back({std::move(pidfd.value()), std::move(cgroup.value())});
}

// A worker's cgroup outlives the worker until here: what it left behind is
// killed when the kernel starts its next worker or retires.
void DirectLauncher::end_exited_workers() {
  std::vector<Contained> ended;
  {
    std::lock_guard lock(mutex_);
    for (auto it = contained_.begin(); it != contained_.end();) {
      if (exited(it->worker.get())) {
        ended.push_back(std::move(*it));
        it = contained_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Destroyed outside the lock: each kill waits for its cgroup to empty.
}

void DirectLauncher::retire() {
  std::vector<Contained> ended;
  std::lock_guard lock(mutex_);
  ended.swap(contained_);
}

}  // namespace o4s::sandbox
