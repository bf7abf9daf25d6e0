// The tools for kernels that run as Slurm jobs (slurm_kernels.h). They
// answer in the same shapes as the local kernels' tools, and a cell's
// approval question is put to the client as a local kernel's is.
#include "mcp/approval_question.h"
#include "mcp/execution_result.h"
#include "mcp/protocol_era.h"
#include "mcp/server.h"

namespace o4s::mcp {

namespace {

// The bridge's answer for the Jupyter kernel's prompt.
Json slurm_reply(const std::optional<Json>& answer) {
  std::string decision = answer ? elicited_decision(*answer) : "";
  return Json{{"value", decision == "once" ? "y" : decision == "always" ? "a" : "n"}};
}

// Who answers a Slurm cell's approval question: the client, by
// elicitation (on the session, or for a 2026-07-28 call as the execution's
// question), as for a local kernel; a client without elicitation is
// refused with the local kernels' reason.
SlurmKernel::Asker slurm_asker(const ToolCall& call, const std::shared_ptr<SlurmKernel>& kernel) {
  std::weak_ptr<Session> weak = call.session;
  bool stateless = call.stateless;
  bool form_capable = can_elicit_form(call.client_capabilities);
  std::weak_ptr<SlurmKernel> weak_kernel = kernel;
  return [=](const std::string& prompt, const std::shared_ptr<Execution>& execution) -> Json {
    auto give_up = [execution] { return execution->stop_requested() || execution->finished(); };
    auto live = weak_kernel.lock();
    if (!live) return Json{{"value", "n"}};
    if (stateless) {
      if (!form_capable) return Json{{"cannot_ask", true}};
      Json question{{"method", "elicitation/create"},
                    {"params", prompt_elicitation(prompt, live->id + " (a Slurm job)", true)}};
      return slurm_reply(execution->ask_question(std::move(question), kApprovalWait, give_up));
    }
    auto client = weak.lock();
    if (!client || client->closed()) return Json{{"value", "n"}};
    if (!client->client_can_elicit()) return Json{{"cannot_ask", true}};
    Json params = prompt_elicitation(prompt, live->id + " (a Slurm job)",
                                     client->protocol_version() >= "2025-11-25");
    auto answer = client->ask("elicitation/create", params, kApprovalWait, give_up);
    return slurm_reply(answer ? std::optional<Json>(answer.value()) : std::nullopt);
  };
}

Json slurm_variables(SlurmKernel& kernel) {
  auto answer = kernel.variables(200);
  if (!answer) {
    if (answer.error().code == ErrorCode::kBusy) {
      return tool_error("list_variables: kernel " + kernel.id +
                        " is running a cell; ask again when it is idle");
    }
    return tool_error("list_variables: " + answer.error().message);
  }
  Json out{{"variables", answer.value().value("variables", Json::array())}};
  if (answer.value().contains("truncated")) out["truncated"] = answer.value()["truncated"];
  return ok_result(std::move(out));
}

}  // namespace

void McpServer::use_slurm(SlurmSettings settings, bool by_default) {
  settings.idle_timeout = pool_.settings().idle_timeout;
  slurm_ = std::make_unique<SlurmKernels>(std::move(settings), pool_);
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
  auto started = kernel->execute(call.arguments["code"].get<std::string>(), timeout_s,
                                 slurm_asker(call, kernel));
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
  if (tool == "list_variables") return slurm_variables(*kernel);
  return tool_error(tool + ": not available for a kernel on Slurm");
}

}  // namespace o4s::mcp
