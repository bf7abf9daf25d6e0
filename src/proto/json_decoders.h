// The two JSON parsers behind decode_frame. Internal to proto; exposed so a
// test can hold the fast one to the reference one input by input.
#pragma once

#include <optional>
#include <string_view>

#include "base/result.h"
#include "proto/frame_codec.h"

namespace o4s::proto::detail {

// The reference parser (nlohmann), with the nesting bound checked first.
// Its accept/reject decisions and values define what a frame is.
Result<Json> decode_reference(std::string_view text);

// simdjson, for speed: a frame carrying a megabyte of output parses at
// gigabytes per second instead of ~100 MB/s. Returns nullopt whenever it
// cannot vouch for giving exactly the reference's answer (any parse error,
// a big integer, nesting past the bound, a string that is not valid UTF-8);
// the caller then asks decode_reference.
std::optional<Json> decode_fast(std::string_view text);

}  // namespace o4s::proto::detail
