// Protocol limits shared by the manager and its tests (spec kernel.md §3.11).
#pragma once

#include <cstddef>

namespace o4s::proto {

// Worst JSON expansion per char (6) x three bounded text fields x 1,000,000
// chars + 2,000,000 for the rest: the largest frame a conforming worker sends.
inline constexpr std::size_t kMaxFrameBytes = 20'000'000;
// Deepest array/object nesting a frame may have. Every consumer of a frame
// (the Python conversion, dump() for audit previews) recurses per level, so a
// cell writing `[[[[...` onto the protocol pipe is refused at decode time.
inline constexpr int kMaxFrameDepth = 256;
inline constexpr std::size_t kLogFramesSkippedLimit = 8;
inline constexpr std::size_t kWorkerLogTailEntries = 32;
inline constexpr std::size_t kWorkerLogEntryChars = 2'000;
inline constexpr std::size_t kStderrTailBytes = 65'536;
inline constexpr int kInspectLimitMin = 1;
inline constexpr int kInspectLimitMax = 500;

}  // namespace o4s::proto
