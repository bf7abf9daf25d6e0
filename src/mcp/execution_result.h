// An execution as a tools/call result: one text block (output, the last
// value or the error; head and tail kept past max_output_chars, with a
// marker saying how much was cut and where the whole is), an image block
// per PNG/JPEG display (bounded), resource links to the whole output and to
// saved artifacts, and structuredContent as the outputSchema says.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "mcp/execution.h"
#include "mcp/resources.h"

namespace o4s::mcp {

using Json = nlohmann::json;

Json execution_tool_result(const ExecutionSnapshot& snapshot, std::size_t max_output_chars,
                           ResourceRegistry& resources);

// `text` cut to at most `max_chars` code points: its head and tail with a
// marker between naming the cut and `where` the whole is. `cut` receives
// the number of code points removed.
std::string head_and_tail(const std::string& text, std::size_t max_chars, const std::string& where,
                          std::size_t& cut);

}  // namespace o4s::mcp
