// A Cell's stdout rebuilt from its stdout_chunk frames, so the worker need
// not send the same text twice (once live, once in the response).
//
// Host-internal protocol (both ends are this project's): each chunk carries
// "stream" (unique per Cell in its worker) and "seq" (0, 1, ...); a response
// whose stdout is left out carries
//   "stdout_stream": {"stream": S, "chunks": N, "head_trim": T}
// and the host uses exactly chunks 0..N-1 of stream S, in order (later ones
// were written after the response was built), with T code
// points cut before the last one (a spill marker naming a file made the
// captured head shorter than the streamed one). Anything else -- a chunk
// missing, duplicated (a forked child writing through an inherited buffer)
// or out of order -- and the host asks the worker for the text instead
// (stdout_request / stdout_text). The field never reaches the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/frame_codec.h"

namespace o4s::kernel {

inline constexpr const char* kStdoutStreamField = "stdout_stream";

struct StreamedChunk {
  std::string text;
  std::optional<std::int64_t> stream;
  std::optional<std::int64_t> seq;
};

struct StreamDeclaration {
  std::int64_t stream = 0;
  std::uint64_t chunks = 0;
  std::uint64_t head_trim = 0;
};

// Removes the declaration from `response`; nullopt if absent or malformed.
std::optional<StreamDeclaration> take_stream_declaration(proto::Json& response);

// The declared stream's text, or nullopt if the chunks held are not exactly
// that stream's 0..N-1 in order.
std::optional<std::string> rebuild_declared_stdout(const std::vector<StreamedChunk>& chunks,
                                                   const StreamDeclaration& declared);

// Every chunk's text in arrival order (spec §3.8, an undeclared empty stdout).
std::string concatenate_chunks(const std::vector<StreamedChunk>& chunks);

// The concatenation of `texts`; with trim_chars > 0 and at least two texts,
// the last stays whole and trim_chars UTF-8 code points are cut before it.
std::string assemble_streamed_stdout(const std::vector<std::string>& texts,
                                     std::uint64_t trim_chars);

}  // namespace o4s::kernel
