#include "mcp/tool_schemas.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace o4s::mcp {

namespace {

// Fixed order: the kernel's life first, then running code, then files.
constexpr const char* kTools = R"json([
{"name": "create_kernel",
 "description": "Start a persistent, sandboxed Python or R kernel. Returns its kernel_id (keep it: the kernel outlives this connection).",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {
   "language": {"type": "string", "enum": ["python", "r"], "default": "python"},
   "workspace": {"type": "string", "description": "Directory the kernel works in (under the server's --workspace-root); default: a fresh one."},
   "engine": {"type": "string", "enum": ["local", "slurm"], "description": "Where the kernel runs: on this machine, or as a Slurm job (a server started with --slurm); default: the server's --engine."}}},
 "outputSchema": {"type": "object",
  "properties": {
   "kernel_id": {"type": "string"}, "language": {"type": "string"},
   "workspace": {"type": "string"}, "sandbox": {"type": "object"},
   "engine": {"type": "string"}, "job_id": {"type": "string"}},
  "required": ["kernel_id", "language", "workspace", "sandbox"]}},
{"name": "list_kernels",
 "description": "List this server's kernels (id, language, state, created, last used, cells, workspace, memory of worker and standby) and the warm pools (size, ready, memory).",
 "inputSchema": {"type": "object", "additionalProperties": false, "properties": {}},
 "outputSchema": {"type": "object",
  "properties": {"kernels": {"type": "array", "items": {"type": "object",
   "properties": {
    "kernel_id": {"type": "string"}, "language": {"type": "string"},
    "state": {"type": "string", "enum": ["idle", "busy", "dead"]},
    "created": {"type": "string"}, "last_used": {"type": "string"},
    "cells_run": {"type": "integer"}, "workspace": {"type": "string"},
    "rss_bytes": {"type": "integer"}, "standby_rss_bytes": {"type": "integer"}},
   "required": ["kernel_id", "language", "state", "created", "last_used", "cells_run", "workspace"]}},
   "pool": {"type": "object", "additionalProperties": {"type": "object",
    "properties": {"size": {"type": "integer"}, "ready": {"type": "integer"},
     "rss_bytes": {"type": "integer"}}}}},
  "required": ["kernels"]}},
{"name": "execute",
 "description": "Run code in a kernel; variables persist between calls. Long cells report progress; wait=false returns at once with an execution_id for get_execution.",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {
   "kernel_id": {"type": "string"},
   "code": {"type": "string"},
   "timeout_s": {"type": "number", "minimum": 0.001, "maximum": 604800, "description": "Interrupt the cell after this many seconds."},
   "max_output_chars": {"type": "integer", "minimum": 200, "maximum": 1000000, "default": 20000},
   "wait": {"type": "boolean", "default": true}},
  "required": ["kernel_id", "code"]},
 "outputSchema": {"$ref": "#execution"}},
{"name": "get_execution",
 "description": "The state and output so far of an execution (from execute with wait=false); wait_s waits up to that long for it to end.",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {
   "execution_id": {"type": "string"},
   "wait_s": {"type": "number", "minimum": 0, "maximum": 3600, "default": 0},
   "max_output_chars": {"type": "integer", "minimum": 200, "maximum": 1000000, "default": 20000}},
  "required": ["execution_id"]},
 "outputSchema": {"$ref": "#execution"}},
{"name": "interrupt",
 "description": "Interrupt the kernel's running cell (it ends as interrupted; variables survive).",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {"kernel_id": {"type": "string"}}, "required": ["kernel_id"]},
 "outputSchema": {"type": "object",
  "properties": {"interrupted": {"type": "boolean"}, "execution_id": {"type": "string"}},
  "required": ["interrupted"]}},
{"name": "list_variables",
 "description": "The kernel's variables with types, shapes, dtypes (R: classes, dims); runs no user code.",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {"kernel_id": {"type": "string"}}, "required": ["kernel_id"]},
 "outputSchema": {"type": "object",
  "properties": {"variables": {"type": "array", "items": {"type": "object"}}},
  "required": ["variables"]}},
{"name": "read_file",
 "description": "Read a file in the kernel's workspace (text as UTF-8, binary as base64); offset/length in bytes.",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {
   "kernel_id": {"type": "string"}, "path": {"type": "string"},
   "offset": {"type": "integer", "minimum": 0, "maximum": 9007199254740992, "default": 0},
   "length": {"type": "integer", "minimum": 1, "maximum": 4194304, "default": 1048576}},
  "required": ["kernel_id", "path"]},
 "outputSchema": {"type": "object",
  "properties": {
   "path": {"type": "string"}, "size": {"type": "integer"}, "offset": {"type": "integer"},
   "length": {"type": "integer"}, "encoding": {"type": "string", "enum": ["utf-8", "base64"]},
   "content": {"type": "string"}, "eof": {"type": "boolean"}},
  "required": ["path", "size", "offset", "length", "encoding", "content", "eof"]}},
{"name": "write_file",
 "description": "Write a file in the kernel's workspace (parent directories are made); encoding utf-8 or base64.",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {
   "kernel_id": {"type": "string"}, "path": {"type": "string"}, "content": {"type": "string"},
   "encoding": {"type": "string", "enum": ["utf-8", "base64"], "default": "utf-8"}},
  "required": ["kernel_id", "path", "content"]},
 "outputSchema": {"type": "object",
  "properties": {"path": {"type": "string"}, "bytes_written": {"type": "integer"}},
  "required": ["path", "bytes_written"]}},
{"name": "restart_kernel",
 "description": "Restart a kernel's worker: a fresh, empty namespace in the same workspace.",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {"kernel_id": {"type": "string"}}, "required": ["kernel_id"]},
 "outputSchema": {"type": "object",
  "properties": {"kernel_id": {"type": "string"}, "restarted": {"type": "boolean"}},
  "required": ["kernel_id", "restarted"]}},
{"name": "shutdown_kernel",
 "description": "Stop a kernel and its processes; its kernel_id is no longer valid.",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "properties": {"kernel_id": {"type": "string"}}, "required": ["kernel_id"]},
 "outputSchema": {"type": "object",
  "properties": {"kernel_id": {"type": "string"}, "shut_down": {"type": "boolean"}},
  "required": ["kernel_id", "shut_down"]}}
])json";

// execute's and get_execution's structuredContent.
constexpr const char* kExecutionSchema = R"json(
{"type": "object",
 "properties": {
  "status": {"type": "string", "enum": ["ok", "error", "interrupted", "timeout", "running"]},
  "execution_id": {"type": "string"},
  "kernel_id": {"type": "string"},
  "execution_count": {"type": "integer"},
  "stdout": {"type": "string"},
  "stderr": {"type": "string"},
  "result": {"type": ["string", "null"]},
  "error": {"type": ["object", "null"],
   "properties": {"ename": {"type": "string"}, "evalue": {"type": "string"},
    "traceback": {"type": "array", "items": {"type": "string"}}},
   "required": ["ename", "evalue", "traceback"]},
  "truncated": {"type": "object",
   "properties": {"stdout_chars": {"type": "integer"}, "stderr_chars": {"type": "integer"}},
   "required": ["stdout_chars", "stderr_chars"]},
  "displays": {"type": "array", "items": {"type": "object"}},
  "files_read": {"type": "array", "items": {"type": "string"}},
  "artifacts": {"type": "array", "items": {"type": "object"}},
  "usage": {"type": "object",
   "properties": {"wall_s": {"type": "number"}, "cpu_s": {"type": "number"},
    "peak_rss_bytes": {"type": "integer"}},
   "required": ["wall_s", "cpu_s", "peak_rss_bytes"]}},
 "required": ["status", "execution_id", "execution_count", "stdout", "stderr", "result", "error",
  "truncated", "displays", "files_read", "usage"]}
)json";

Json build_definitions() {
  Json tools = Json::parse(kTools);
  Json execution = Json::parse(kExecutionSchema);
  for (auto& tool : tools) {
    if (tool["outputSchema"].contains("$ref")) tool["outputSchema"] = execution;
  }
  return tools;
}

std::string type_name(const Json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_null()) return "null";
  if (value.is_array()) return "an array";
  return "an object";
}

bool has_type(const Json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "integer") {
    // Past LLONG_MAX it would turn negative where the handlers read it.
    if (value.is_number_unsigned()) {
      return value.get<std::uint64_t>() <= std::numeric_limits<long long>::max();
    }
    if (value.is_number_integer()) return true;
    // 3.0 is an integer in JSON Schema; only up to 2^53, where a double
    // still holds every integer (and the cast to long long is defined).
    if (!value.is_number_float()) return false;
    double number = value.get<double>();
    return std::isfinite(number) && std::trunc(number) == number &&
           std::fabs(number) <= 9007199254740992.0;
  }
  if (type == "number") return value.is_number();
  return false;
}

std::string check_property(const std::string& name, const Json& spec, const Json& value) {
  std::string type = spec.value("type", "");
  if (!has_type(value, type)) {
    return "argument '" + name + "' must be " + (type == "integer" ? "an " : "a ") + type +
           ", not " + type_name(value);
  }
  if (auto choices = spec.find("enum"); choices != spec.end()) {
    bool listed = false;
    for (const auto& choice : *choices) listed = listed || choice == value;
    if (!listed) return "argument '" + name + "' must be one of " + choices->dump();
  }
  if (value.is_number()) {
    double number = value.get<double>();
    if (spec.contains("minimum") && number < spec["minimum"].get<double>()) {
      return "argument '" + name + "' must be at least " + spec["minimum"].dump();
    }
    if (spec.contains("maximum") && number > spec["maximum"].get<double>()) {
      return "argument '" + name + "' must be at most " + spec["maximum"].dump();
    }
  }
  return "";
}

}  // namespace

const Json& tool_definitions() {
  static const Json definitions = build_definitions();
  return definitions;
}

const Json* find_tool(const std::string& name) {
  for (const auto& tool : tool_definitions()) {
    if (tool["name"] == name) return &tool;
  }
  return nullptr;
}

std::string check_arguments(const Json& schema, const Json& arguments) {
  if (!arguments.is_object()) return "arguments must be an object";
  const Json& properties = schema["properties"];
  for (const auto& [name, value] : arguments.items()) {
    auto spec = properties.find(name);
    if (spec == properties.end()) {
      std::string known;
      for (const auto& [key, unused] : properties.items())
        known += (known.empty() ? "" : ", ") + key;
      return "unknown argument '" + name + "' (this tool takes: " + known + ")";
    }
    if (std::string why = check_property(name, *spec, value); !why.empty()) return why;
  }
  if (auto required = schema.find("required"); required != schema.end()) {
    for (const auto& name : *required) {
      if (!arguments.contains(name.get<std::string>())) {
        return "missing required argument '" + name.get<std::string>() + "'";
      }
    }
  }
  return "";
}

}  // namespace o4s::mcp
