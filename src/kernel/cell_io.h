// A cell's displays and input() requests, as the execute loop handles them:
// frames to bundles for the caller, bounded collection for the response, and
// the answer to an input_request (never blocking on a worker that stopped
// reading its replies).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_hooks.h"

namespace o4s::kernel {

// What the response may hold of a cell's displays (their caller still sees
// every one through on_display).
inline constexpr std::size_t kMaxCollectedDisplayBytes = 64'000'000;
// Unread reply bytes past which the worker is taken to ignore its replies.
inline constexpr std::size_t kInputBacklogBytes = 16'384;

// The caller's bundle for a display or clear_output frame; nullopt when the
// frame is malformed (then it is dropped).
std::optional<Json> display_bundle(const Json& frame);

class DisplayCollector {
 public:
  // Keeps the bundle for the response unless that would pass the budget.
  void keep(Json bundle);
  bool empty() const { return kept_.empty(); }
  bool truncated() const { return truncated_; }
  Json take();

 private:
  std::vector<Json> kept_;
  std::size_t bytes_ = 0;
  bool truncated_ = false;
};

// The input_reply frame for one input_request of the running cell.
Json input_reply(const Json& request, InputSource* source, bool is_running_cell);

}  // namespace o4s::kernel
