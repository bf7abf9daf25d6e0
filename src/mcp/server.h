// The MCP server's protocol side: one method table (initialize, ping,
// tools/list, tools/call, resources/*, the notifications), the handshake's
// version negotiation, and the tools on top of the kernel pool. Transport
// agnostic: stdio and HTTP hand it decoded messages and a Session to
// answer through.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mcp/audit_log.h"
#include "mcp/json_rpc.h"
#include "mcp/kernel_pool.h"
#include "mcp/protocol_era.h"
#include "mcp/resources.h"
#include "mcp/session.h"
#include "mcp/slurm_kernels.h"

namespace o4s::mcp {

struct ServerInfo {
  std::string name = "openai4s";
  std::string version = "0.1.0";
};

// What a handler answers: a result, or a JSON-RPC error.
struct Reply {
  Json result;
  std::optional<std::pair<int, std::string>> error;
  static Reply ok(Json result) { return Reply{std::move(result), std::nullopt}; }
  static Reply fail(int code, std::string message) {
    return Reply{nullptr, std::make_pair(code, std::move(message))};
  }
};

// One tools/call in flight.
struct ToolCall {
  std::shared_ptr<Session> session;
  Json request_id;
  Json arguments;
  std::optional<Json> progress_token;
  // A 2026-07-28 request: its own capabilities, and on a retry after an
  // input_required result, the state it echoes and the client's answers.
  bool stateless = false;
  Json client_capabilities = Json::object();
  std::optional<std::string> request_state;
  Json input_responses = Json::object();
};

class McpServer {
 public:
  McpServer(KernelPool& pool, ServerInfo info);
  ~McpServer();

  // One message's text (a stdio line, an HTTP body). The answer, if any,
  // goes out through `session` (tools/call answers from its own thread).
  void handle_text(const std::shared_ptr<Session>& session, const std::string& text);
  void handle(const std::shared_ptr<Session>& session, Json message);
  // Waits for the tools/call threads still running (after the kernels were
  // shut down, they end promptly).
  void wait_for_calls();
  // At a signal: waits a bounded time for the calls to answer (their
  // kernels are shut down already) and for their audit rows to be written.
  void drain_for_exit(std::chrono::milliseconds timeout);
  // Kernels on Slurm (slurm_tools.cpp): create_kernel's engine "slurm"
  // starts one; `by_default` makes it the engine when none is named.
  void use_slurm(SlurmSettings settings, bool by_default);
  void shutdown_slurm_kernels();

 private:
  using Method = std::function<Reply(const std::shared_ptr<Session>&, const Incoming&)>;
  struct MethodEntry {
    Method handler;
    bool on_own_thread = false;  // may block (tools/call)
  };
  void register_methods();
  void dispatch_request(const std::shared_ptr<Session>& session, Incoming in);
  void dispatch_notification(const std::shared_ptr<Session>& session, const Incoming& in);

  // The era checks before a request is served: an error to send, if any.
  std::optional<Json> refuse_request(const std::shared_ptr<Session>& session, const Incoming& in);
  Reply initialize(const std::shared_ptr<Session>& session, const Incoming& in);
  Reply discover();
  Json server_info() const;
  Reply call_tool(const std::shared_ptr<Session>& session, const Incoming& in);
  Reply read_resource(const Incoming& in);

  // The tools (tools.cpp): each returns a CallToolResult.
  using Tool = std::function<Json(ToolCall&)>;
  void register_tools();
  Json create_kernel(ToolCall& call);
  Json list_kernels(ToolCall& call);
  Json shutdown_kernel(ToolCall& call);
  Json restart_kernel(ToolCall& call);
  Json execute(ToolCall& call);
  Json get_execution(ToolCall& call);
  Json interrupt(ToolCall& call);
  Json list_variables(ToolCall& call);
  Json read_file(ToolCall& call);
  Json write_file(ToolCall& call);
  // A 2026-07-28 retry of execute or get_execution that answers the
  // question its first call returned (input_required).
  Json resume_execution(ToolCall& call, const std::string& tool);
  // Waits for `execution`, with progress notifications and cancellation.
  Json await_execution(ToolCall& call, const std::shared_ptr<Execution>& execution,
                       std::optional<double> wait_s, std::size_t max_output_chars);
  // One frame per client connection; every tool call and its outcome is a
  // row under it.
  void audit_tool_call(const std::shared_ptr<Session>& session, const std::string& tool,
                       const Json& arguments, const Json& result);
  host::Approver approver_for(const ToolCall& call, const std::shared_ptr<Kernel>& kernel);
  // A Slurm kernel's tool call (slurm_tools.cpp), or nullopt when
  // `kernel_id` names none (the local pool's then).
  std::optional<Json> slurm_tool(const std::string& tool, ToolCall& call);
  // The workspace (as created) of a kernel, local or on Slurm, for the
  // file tools; nullopt for an unknown kernel_id.
  std::optional<std::pair<std::string, DirectoryId>> workspace_of(const std::string& kernel_id);
  Json slurm_create_kernel(ToolCall& call);
  Json slurm_execute(const std::shared_ptr<SlurmKernel>& kernel, ToolCall& call);
  bool slurm_engine(const ToolCall& call) const;

  KernelPool& pool_;
  ServerInfo info_;
  ResourceRegistry resources_;
  AuditLog audit_;
  std::map<std::string, MethodEntry> methods_;
  std::map<std::string, Tool> tools_;
  std::unique_ptr<SlurmKernels> slurm_;
  bool slurm_by_default_ = false;

  std::mutex audit_mutex_;  // one connection frame, made once
  std::mutex calls_mutex_;
  std::condition_variable calls_done_;
  std::size_t calls_running_ = 0;
};

// A tools/call result that is a tool error the agent can act on.
Json tool_error(const std::string& message);
// A tools/call result: `structured`, also as its text.
Json ok_result(Json structured);

}  // namespace o4s::mcp
