// A Cell's stdout rebuilt from its stdout_chunk frames, so the worker need
// not send the same text twice (once live, once in the response).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace o4s::kernel {

// Response field by which the worker says: "stdout is the streamed text,
// with the last chunk (the truncation marker) kept whole and the N code
// points before it removed". Used when a spill marker naming a file made the
// captured head shorter than the streamed one. Host-internal: removed before
// the response reaches the caller.
inline constexpr const char* kStdoutHeadTrimField = "stdout_head_trim";

// The concatenation of `chunks`; with trim_chars > 0 and at least two
// chunks, the last chunk stays whole and trim_chars UTF-8 code points are
// cut from the end of the text before it.
std::string assemble_streamed_stdout(const std::vector<std::string>& chunks,
                                     std::uint64_t trim_chars);

}  // namespace o4s::kernel
