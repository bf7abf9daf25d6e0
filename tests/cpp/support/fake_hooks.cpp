#include "support/fake_hooks.h"

namespace o4s::testing {

void FakeHooks::answer(kernel::DispatchOutcome outcome) {
  set_dispatcher([outcome](const std::string&, const Json&) { return outcome; });
}

void FakeHooks::override_seam(Seam seam, bool on) {
  std::lock_guard lock(mutex_);
  if (on) {
    overridden_.insert(seam);
  } else {
    overridden_.erase(seam);
  }
}

std::vector<FakeHooks::Call> FakeHooks::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

kernel::DispatchOutcome FakeHooks::dispatch(const std::string& method, const Json& args,
                                            const kernel::DispatchContext& context) {
  Dispatcher dispatcher;
  {
    std::lock_guard lock(mutex_);
    calls_.push_back(Call{method, args, context.authorization_generation});
    dispatcher = dispatcher_;
  }
  if (!dispatcher) return kernel::NoDispatcher{};
  return dispatcher(method, args);
}

bool FakeHooks::overridden(Seam seam) const {
  std::lock_guard lock(mutex_);
  return overridden_.count(seam) != 0;
}

Status RecordingSink::deliver(const std::string& text) {
  std::size_t index = chunks.size();
  chunks.push_back(text);
  if (on_text) on_text(text);
  if (fail_at && index >= *fail_at) {
    return make_error(ErrorCode::kCancelled, "on_chunk raised: sink full");
  }
  return {};
}

}  // namespace o4s::testing
