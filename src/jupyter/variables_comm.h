// The namespace's variables for a Jupyter client, as a comm: a client
// opens a comm on target "openai4s.variables" with {"limit": N} (1..500,
// default 200); the kernel answers on it once, with the worker's own
// listing ({"variables": [...], "truncated": bool}, the same rows the MCP
// server's list_variables returns for a local kernel) or {"error": why},
// and closes it. The listing runs no user code (the worker's inspector).
// The MCP server's Slurm kernels use it through their bridge.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <xeus/xcomm.hpp>

#include "base/result.h"

namespace o4s::jupyter {

inline constexpr const char* kVariablesCommTarget = "openai4s.variables";

using ListVariables = std::function<Result<nlohmann::json>(long long limit)>;

void register_variables_comm(xeus::xcomm_manager& comms, ListVariables list);

}  // namespace o4s::jupyter
