// The tools' definitions as tools/list shows them, in their fixed order:
// name, a short description (every word costs the agent's context), the
// inputSchema the arguments are checked against, and the outputSchema of
// structuredContent.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace o4s::mcp {

using Json = nlohmann::json;

// The array of tool definitions (parsed once).
const Json& tool_definitions();
// One tool's definition, or nullptr.
const Json* find_tool(const std::string& name);

// Checks `arguments` against an inputSchema of the subset the tools use
// (an object of string / integer / number / boolean properties, enums,
// minimum / maximum, required, no other properties); "" when they fit,
// else what to fix.
std::string check_arguments(const Json& schema, const Json& arguments);

}  // namespace o4s::mcp
