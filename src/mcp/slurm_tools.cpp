// The tools for kernels that run as Slurm jobs (slurm_kernels.h). They
// answer in the same shapes as the local kernels' tools; what a Slurm
// kernel cannot do yet (list_variables, approvals asked of the client) is
// a clear tool error, never a hang.
#include "mcp/base64.h"
#include "mcp/execution_result.h"
#include "mcp/server.h"
#include "mcp/workspace_files.h"

namespace o4s::mcp {

namespace {

Json slurm_file(const SlurmKernel& kernel, const std::string& tool, ToolCall& call) {
  if (tool == "read_file") {
    auto read = read_workspace_file(kernel.workspace, kernel.workspace_id, call.arguments["path"],
                                    call.arguments.value("offset", 0LL),
                                    call.arguments.value("length", 1LL << 20));
    if (!read) return tool_error("read_file: " + read.error().message);
    return ok_result(read.value());
  }
  std::string content = call.arguments["content"];
  if (call.arguments.value("encoding", "utf-8") == "base64") {
    auto decoded = base64_decode(content);
    if (!decoded) return tool_error("write_file: content is not valid (padded, standard) base64");
    content = std::move(*decoded);
  }
  auto written =
      write_workspace_file(kernel.workspace, kernel.workspace_id, call.arguments["path"], content);
  if (!written) return tool_error("write_file: " + written.error().message);
  return ok_result(written.value());
}

}  // namespace

void McpServer::use_slurm(SlurmSettings settings, bool by_default) {
  slurm_ = std::make_unique<SlurmKernels>(std::move(settings));
  slurm_by_default_ = by_default;
}

void McpServer::shutdown_slurm_kernels() {
  if (slurm_) slurm_->shutdown_all();
}

bool McpServer::slurm_engine(const ToolCall& call) const {
  auto engine = call.arguments.find("engine");
  if (engine == call.arguments.end() || !engine->is_string()) return slurm_by_default_;
  return *engine == "slurm";
}

Json McpServer::slurm_create_kernel(ToolCall& call) {
  if (!slurm_) {
    return tool_error(
        "create_kernel: this server runs no Slurm kernels (start it with --slurm or "
        "--engine slurm)");
  }
  std::string language = call.arguments.value("language", "python");
  std::optional<std::string> workspace;
  if (call.arguments.contains("workspace")) workspace = call.arguments["workspace"];
  auto created = slurm_->create(language, workspace);
  if (!created) return tool_error("create_kernel: " + created.error().message);
  Json row = created.value()->describe();
  // The sandbox is the job's: its kernel says which with its banner and
  // its first cell's warning, as a local Jupyter kernel does.
  Json sandbox{{"state", "in the Slurm job"}, {"engine", "slurm"}, {"job_id", row["job_id"]}};
  return ok_result(Json{{"kernel_id", row["kernel_id"]},
                        {"language", row["language"]},
                        {"workspace", row["workspace"]},
                        {"engine", "slurm"},
                        {"job_id", row["job_id"]},
                        {"sandbox", std::move(sandbox)}});
}

Json McpServer::slurm_execute(const std::shared_ptr<SlurmKernel>& kernel, ToolCall& call) {
  std::optional<double> timeout_s;
  if (call.arguments.contains("timeout_s")) timeout_s = call.arguments["timeout_s"].get<double>();
  auto max_chars = static_cast<std::size_t>(call.arguments.value("max_output_chars", 20000LL));
  auto started = kernel->execute(call.arguments["code"].get<std::string>(), timeout_s);
  if (!started) return tool_error("execute: " + started.error().message);
  auto execution = started.value();
  slurm_->remember(execution);
  if (!call.arguments.value("wait", true)) {
    return execution_tool_result(execution->snapshot(), max_chars, resources_);
  }
  // Cancelling this request interrupts the cell; the namespace survives.
  std::weak_ptr<SlurmKernel> weak = kernel;
  call.session->on_cancel(call.request_id, [weak] {
    if (auto live = weak.lock()) (void)live->interrupt(StopReason::kInterrupted);
  });
  Json result = await_execution(call, execution, std::nullopt, max_chars);
  call.session->forget_cancel(call.request_id);
  return result;
}

std::optional<Json> McpServer::slurm_tool(const std::string& tool, ToolCall& call) {
  if (!slurm_) return std::nullopt;
  std::string id = call.arguments.value("kernel_id", "");
  auto kernel = slurm_->find(id);
  if (!kernel) return std::nullopt;
  if (tool == "execute") return slurm_execute(kernel, call);
  if (tool == "interrupt") {
    bool busy = kernel->describe()["state"] == "busy";
    if (auto sent = kernel->interrupt(StopReason::kInterrupted); !sent) {
      return tool_error("interrupt: " + sent.error().message);
    }
    return ok_result(Json{{"interrupted", busy}});
  }
  if (tool == "restart_kernel") {
    if (auto done = slurm_->restart(id); !done) {
      return tool_error("restart_kernel: " + done.error().message);
    }
    return ok_result(Json{{"kernel_id", id}, {"restarted", true}});
  }
  if (tool == "shutdown_kernel") {
    if (auto done = slurm_->shutdown(id); !done) return tool_error(done.error().message);
    return ok_result(Json{{"kernel_id", id}, {"shut_down", true}});
  }
  if (tool == "read_file" || tool == "write_file") return slurm_file(*kernel, tool, call);
  return tool_error(tool + ": not available for a kernel on Slurm yet");
}

}  // namespace o4s::mcp
