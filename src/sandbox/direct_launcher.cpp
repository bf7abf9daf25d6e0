#include "sandbox/launcher.h"

namespace o4s::sandbox {

namespace {

class DirectLaunch final : public PreparedLaunch {
 public:
  explicit DirectLaunch(proc::SpawnRequest request) : request_(std::move(request)) {}
  const proc::SpawnRequest& request() const override { return request_; }
  Result<LaunchOutcome> finish(const SpawnedLauncher&) override { return LaunchOutcome{}; }

 private:
  proc::SpawnRequest request_;
};

}  // namespace

Result<std::unique_ptr<PreparedLaunch>> DirectLauncher::prepare(const LaunchSpec& spec) {
  return std::unique_ptr<PreparedLaunch>(new DirectLaunch(spec.request));
}

}  // namespace o4s::sandbox
