#include <string>
#include <string_view>

#include "base/random_id.h"
#include "sandbox/launcher.h"

namespace o4s::sandbox {

namespace {

// The worker's mark (proc/descendants.h), before its unique value. Not an
// OPENAI4S_ setting: the launcher sets it, and only the host's scan reads it.
constexpr std::string_view kMarkPrefix = "O4S_WORKER_MARK=";

class DirectLaunch final : public PreparedLaunch {
 public:
  explicit DirectLaunch(proc::SpawnRequest request) : request_(std::move(request)) {}
  const proc::SpawnRequest& request() const override { return request_; }
  Result<LaunchOutcome> finish(const SpawnedLauncher&) override { return LaunchOutcome{}; }

 private:
  proc::SpawnRequest request_;
};

}  // namespace

// No PID namespace and no cgroup: the worker is made a subreaper, so its
// tree keeps what it orphans, and marked, so what a dead worker orphaned
// is still found. ChildProcess ends both at shutdown (docs/sandbox.md).
Result<std::unique_ptr<PreparedLaunch>> DirectLauncher::prepare(const LaunchSpec& spec) {
  proc::SpawnRequest request = spec.request;
  request.subreaper = true;
  request.descendant_mark.assign(kMarkPrefix);
  request.descendant_mark += uuid4();
  std::erase_if(request.env,
                [](const std::string& entry) { return entry.starts_with(kMarkPrefix); });
  request.env.push_back(request.descendant_mark);
  return std::unique_ptr<PreparedLaunch>(new DirectLaunch(std::move(request)));
}

}  // namespace o4s::sandbox
