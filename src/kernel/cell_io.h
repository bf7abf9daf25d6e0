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
// every one through on_display): at most this many displays and this many
// bytes, each display charged its data and metadata plus a fixed overhead,
// since a tiny display still costs a JSON object here and a dict in Python
// (400,000 one-byte displays once grew the host by 600 MiB).
inline constexpr std::size_t kMaxCollectedDisplayBytes = 64'000'000;
inline constexpr std::size_t kMaxCollectedDisplays = 10'000;
inline constexpr std::size_t kDisplayOverheadBytes = 1'024;
// And each value inside a bundle (a MIME entry, a metadata field) its own.
inline constexpr std::size_t kDisplayNodeOverheadBytes = 256;
// Unread reply bytes past which the worker is taken to ignore its replies.
inline constexpr std::size_t kInputBacklogBytes = 16'384;

// The caller's bundle for a display or clear_output frame; nullopt when the
// frame is malformed (then it is dropped).
std::optional<Json> display_bundle(const Json& frame);

class DisplayCollector {
 public:
  // Keeps the bundle for the response unless that would pass the budget
  // (then it is counted as dropped).
  void keep(Json bundle);
  bool empty() const { return kept_.empty() && dropped_ == 0; }
  bool truncated() const { return dropped_ > 0; }
  std::size_t dropped() const { return dropped_; }
  // The kept bundles, then, when some were dropped, a marker display that
  // says how many.
  Json take();

 private:
  std::vector<Json> kept_;
  std::size_t bytes_ = 0;
  std::size_t dropped_ = 0;
};

// The input_reply frame for one input_request of the running cell.
Json input_reply(const Json& request, InputSource* source, bool is_running_cell);

}  // namespace o4s::kernel
