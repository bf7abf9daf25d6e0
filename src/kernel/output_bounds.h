// What a worker sends the host about one cell, held and passed on within
// fixed bounds (spec kernel.md §3.11). The worker is not trusted to cap its
// own output: a cell can write frames onto the protocol pipe itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernel/streamed_stdout.h"
#include "proto/frame_codec.h"

namespace o4s::kernel {

// The stdout_chunk frames of one cell the host keeps: at most
// kKeptChunkCharsPerStream code points per stream and kKeptChunkBytesPerCell
// bytes in all. A chunk past a bound is dropped whole and counted; a declared
// stream then no longer adds up and the host asks the worker for the text.
class ChunkKeeper {
 public:
  // False if the chunk was dropped.
  bool keep(StreamedChunk chunk);
  const std::vector<StreamedChunk>& chunks() const { return chunks_; }
  std::size_t dropped_chunks() const { return dropped_chunks_; }
  std::size_t dropped_bytes() const { return dropped_bytes_; }

 private:
  std::vector<StreamedChunk> chunks_;
  std::map<std::optional<std::int64_t>, std::size_t> chars_per_stream_;
  std::size_t kept_bytes_ = 0;
  std::size_t dropped_chunks_ = 0;
  std::size_t dropped_bytes_ = 0;
};

// The live on_chunk byte budget of one cell.
class LiveBudget {
 public:
  // True if `bytes` more may be delivered; once false, false for the cell.
  bool admit(std::size_t bytes);

 private:
  std::size_t delivered_ = 0;
  bool exhausted_ = false;
};

// `text` if within kMaxOutputChars plus a marker's length; else its first
// kMaxOutputChars code points and the truncation marker.
std::string cap_output_text(std::string text);

// Caps stdout, stderr and error to the output bound and every other field to
// kMaxResponseFieldBytes serialised (strings cut, arrays and objects keep a
// prefix). True if anything was cut.
bool bound_response_fields(proto::Json& response);

}  // namespace o4s::kernel
