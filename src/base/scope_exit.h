#pragma once

#include <utility>

namespace o4s {

// Runs a callable when the scope ends, unless released.
template <typename F>
class ScopeExit {
 public:
  explicit ScopeExit(F fn) : fn_(std::move(fn)) {}
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;
  ~ScopeExit() {
    if (armed_) fn_();
  }
  void release() { armed_ = false; }

 private:
  F fn_;
  bool armed_ = true;
};

}  // namespace o4s
