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
// A cell's captured stdout/stderr/error text (spec §3.11): this many code
// points plus one marker. The longest marker names a spill file, so it is
// allowed a path's length.
inline constexpr std::size_t kMaxOutputChars = 1'000'000;
inline constexpr std::size_t kMaxOutputMarkerChars = 4'200;
// What the host keeps of a cell's stdout_chunk frames (a hostile worker may
// send any number): per stream the documented output plus its marker, and
// across all streams of the cell (forked children have their own) a byte
// total. Past either, chunks are counted and dropped.
inline constexpr std::size_t kKeptChunkCharsPerStream = kMaxOutputChars + kMaxOutputMarkerChars;
inline constexpr std::size_t kKeptChunkBytesPerCell = 16'000'000;
// Live on_chunk delivery per cell; past it, chunks are no longer delivered.
inline constexpr std::size_t kLiveChunkBytesPerCell = 8'000'000;
// Any other worker-supplied response field handed to the caller, serialised.
inline constexpr std::size_t kMaxResponseFieldBytes = 1'000'000;
inline constexpr int kInspectLimitMin = 1;
inline constexpr int kInspectLimitMax = 500;

}  // namespace o4s::proto
