// The tools' handlers (their definitions are in tool_schemas.cpp). Bad
// arguments and unknown handles are tool errors (isError) that say what to
// fix; the server's own failures are too, so the agent always reads why.
#include <chrono>

#include "mcp/approval_question.h"
#include "mcp/base64.h"
#include "mcp/execution_result.h"
#include "mcp/server.h"
#include "mcp/workspace_files.h"

namespace o4s::mcp {

namespace {

using Clock = std::chrono::steady_clock;

// Progress goes out at least this often while a cell runs (the issue asks
// for at most 5 s; clients that reset their timeout on progress then wait
// as long as the cell runs).
constexpr auto kProgressEvery = std::chrono::seconds(2);

std::string unknown_kernel(const std::string& id) {
  return "unknown kernel_id '" + id +
         "': it was shut down, timed out idle, or never existed. list_kernels shows the live "
         "kernels; create_kernel starts a new one.";
}

// The elicitation for one approval: the shared rendering (controls, bidi
// and invisible characters escaped, a long target cut visibly), "always"
// only for a target shown whole and verbatim.
Json approval_elicitation(const host::ApprovalRequest& request, const std::string& kernel_id,
                          bool form_mode) {
  Json schema = approval_schema(request.text.always_offered);
  std::string message = "A cell in kernel " + kernel_id + " asks to run host." + request.tool +
                        ":\n" + request.text.target_block;
  if (!request.text.reason_block.empty()) {
    message += "The cell's reason (its own words, not checked):\n" + request.text.reason_block;
  }
  message += "Allow it?";
  Json params{{"message", message}, {"requestedSchema", schema}};
  if (form_mode) params["mode"] = "form";
  return params;
}

host::ApprovalAnswer approval_answer(const std::optional<Json>& answer) {
  if (!answer) return host::ApprovalAnswer::kDeny;
  std::string decision = elicited_decision(*answer);
  if (decision == "once") return host::ApprovalAnswer::kOnce;
  if (decision == "always") return host::ApprovalAnswer::kConversation;
  return host::ApprovalAnswer::kDeny;
}

// An interrupt, a cancel or timeout_s ends an approval's wait (a deny).
std::function<bool()> cell_stopped(const std::weak_ptr<Kernel>& weak_kernel) {
  return [weak_kernel] {
    auto live = weak_kernel.lock();
    if (!live) return true;
    std::shared_ptr<Execution> running;
    {
      std::lock_guard lock(live->mutex);
      running = live->running;
    }
    return running && running->stop_requested();
  };
}

std::shared_ptr<Execution> running_cell(const std::weak_ptr<Kernel>& weak_kernel) {
  auto live = weak_kernel.lock();
  if (!live) return nullptr;
  std::lock_guard lock(live->mutex);
  return live->running;
}

// A 2026-07-28 client: the cell's question waits on its execution, handed
// out as an input_required result, answered on the call's retry.
host::Approver stateless_approver(const ToolCall& call, const std::shared_ptr<Kernel>& kernel) {
  std::weak_ptr<Kernel> weak_kernel = kernel;
  bool can_ask = can_elicit_form(call.client_capabilities);
  return [weak_kernel, can_ask, kernel_id = kernel->id](const host::ApprovalRequest& request) {
    if (!can_ask) return host::ApprovalAnswer::kClientCannotAsk;
    auto execution = running_cell(weak_kernel);
    if (!execution) return host::ApprovalAnswer::kDeny;
    Json question{{"method", "elicitation/create"},
                  {"params", approval_elicitation(request, kernel_id, true)}};
    return approval_answer(
        execution->ask_question(std::move(question), kApprovalWait, cell_stopped(weak_kernel)));
  };
}

// A handshake client: the server asks it with elicitation/create.
host::Approver session_approver(const std::shared_ptr<Session>& session,
                                const std::shared_ptr<Kernel>& kernel) {
  std::weak_ptr<Session> weak = session;
  std::weak_ptr<Kernel> weak_kernel = kernel;
  return [weak, weak_kernel, kernel_id = kernel->id](const host::ApprovalRequest& request) {
    auto client = weak.lock();
    // Fail closed: a client gone cannot answer (the unattended policy,
    // deny); one that cannot show a prompt gets its own reason.
    if (!client || client->closed()) return host::ApprovalAnswer::kNoChannel;
    if (!client->client_can_elicit()) return host::ApprovalAnswer::kClientCannotAsk;
    Json params =
        approval_elicitation(request, kernel_id, client->protocol_version() >= "2025-11-25");
    auto answer =
        client->ask("elicitation/create", params, kApprovalWait, cell_stopped(weak_kernel));
    return approval_answer(answer ? std::optional<Json>(answer.value()) : std::nullopt);
  };
}

// What a 2026-07-28 call answers while its cell waits for a decision.
Json input_required(const Execution::Question& question, const std::string& execution_id) {
  return Json{{"resultType", "input_required"},
              {"inputRequests", {{"approval", question.request}}},
              {"requestState", execution_id + ":" + question.state}};
}

// A progress notification with the newest output line as its message.
void report_progress(ToolCall& call, Execution& execution, long long progress) {
  auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - execution.started()).count();
  std::string line = execution.last_line();
  std::string message = "running for " + std::to_string(seconds) + " s";
  if (!line.empty()) message += ": " + line;
  call.session->notify(
      "notifications/progress",
      Json{{"progressToken", *call.progress_token}, {"progress", progress}, {"message", message}});
}

}  // namespace

Json ok_result(Json structured) {
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", structured.dump(1)}}})},
              {"structuredContent", std::move(structured)}};
}

void McpServer::register_tools() {
  tools_["create_kernel"] = [this](ToolCall& c) { return create_kernel(c); };
  tools_["list_kernels"] = [this](ToolCall& c) { return list_kernels(c); };
  tools_["shutdown_kernel"] = [this](ToolCall& c) { return shutdown_kernel(c); };
  tools_["restart_kernel"] = [this](ToolCall& c) { return restart_kernel(c); };
  tools_["execute"] = [this](ToolCall& c) { return execute(c); };
  tools_["get_execution"] = [this](ToolCall& c) { return get_execution(c); };
  tools_["interrupt"] = [this](ToolCall& c) { return interrupt(c); };
  tools_["list_variables"] = [this](ToolCall& c) { return list_variables(c); };
  tools_["read_file"] = [this](ToolCall& c) { return read_file(c); };
  tools_["write_file"] = [this](ToolCall& c) { return write_file(c); };
}

Json McpServer::create_kernel(ToolCall& call) {
  if (slurm_engine(call)) return slurm_create_kernel(call);
  std::string language = call.arguments.value("language", "python");
  std::optional<std::string> workspace;
  if (call.arguments.contains("workspace")) workspace = call.arguments["workspace"];
  auto created = pool_.create(language, workspace);
  if (!created) return tool_error("create_kernel: " + created.error().message);
  const Kernel& kernel = *created.value();
  return ok_result(Json{{"kernel_id", kernel.id},
                        {"language", kernel.language},
                        {"workspace", kernel.workspace},
                        {"sandbox", pool_.sandbox_description(kernel)}});
}

Json McpServer::list_kernels(ToolCall&) {
  Json kernels = pool_.list();
  if (slurm_) {
    for (auto& row : slurm_->list()) kernels.push_back(std::move(row));
  }
  return ok_result(Json{{"kernels", std::move(kernels)}, {"pool", pool_.warm_memory()}});
}

Json McpServer::shutdown_kernel(ToolCall& call) {
  std::string id = call.arguments["kernel_id"];
  if (auto remote = slurm_tool("shutdown_kernel", call)) return *remote;
  if (!pool_.find(id)) return tool_error(unknown_kernel(id));
  if (auto done = pool_.shutdown(id); !done) return tool_error(done.error().message);
  return ok_result(Json{{"kernel_id", id}, {"shut_down", true}});
}

Json McpServer::restart_kernel(ToolCall& call) {
  std::string id = call.arguments["kernel_id"];
  if (auto remote = slurm_tool("restart_kernel", call)) return *remote;
  if (!pool_.find(id)) return tool_error(unknown_kernel(id));
  if (auto done = pool_.restart(id); !done) {
    return tool_error("restart_kernel: " + done.error().message);
  }
  return ok_result(Json{{"kernel_id", id}, {"restarted", true}});
}

host::Approver McpServer::approver_for(const ToolCall& call,
                                       const std::shared_ptr<Kernel>& kernel) {
  return call.stateless ? stateless_approver(call, kernel) : session_approver(call.session, kernel);
}

Json McpServer::execute(ToolCall& call) {
  std::string id = call.arguments["kernel_id"];
  if (auto remote = slurm_tool("execute", call)) return *remote;
  auto kernel = pool_.find(id);
  if (!kernel) return tool_error(unknown_kernel(id));
  std::optional<double> timeout_s;
  if (call.arguments.contains("timeout_s")) timeout_s = call.arguments["timeout_s"].get<double>();
  auto max_chars = call.arguments.value("max_output_chars", 20000LL);
  CellBindings bindings{approver_for(call, kernel)};
  bool wait = call.arguments.value("wait", true);
  // Nothing to report while it runs: the cell runs on this thread. Not for
  // a 2026-07-28 call, which must answer while its cell waits for approval.
  bool here = wait && !call.progress_token && !call.stateless;
  const std::string& code = call.arguments["code"].get_ref<const std::string&>();
  auto started = pool_.start_execute(kernel, code, timeout_s, bindings, here);
  if (!started) return tool_error("execute: " + started.error().message);
  auto execution = started.value();
  if (!wait) {
    return execution_tool_result(execution->snapshot(), static_cast<std::size_t>(max_chars),
                                 resources_);
  }
  // Cancelling this request interrupts the cell; the namespace survives.
  std::weak_ptr<Kernel> weak = kernel;
  call.session->on_cancel(call.request_id, [this, weak, execution] {
    auto live = weak.lock();
    if (live && !execution->finished()) (void)pool_.interrupt(live, StopReason::kInterrupted);
  });
  if (here) run_cell(kernel, execution, code, bindings);
  Json result = await_execution(call, execution, std::nullopt, static_cast<std::size_t>(max_chars));
  call.session->forget_cancel(call.request_id);
  return result;
}

Json McpServer::await_execution(ToolCall& call, const std::shared_ptr<Execution>& execution,
                                std::optional<double> wait_s, std::size_t max_output_chars) {
  auto start = Clock::now();
  auto last_progress = start;
  std::optional<Clock::time_point> until;
  if (wait_s) {
    until =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*wait_s));
  }
  long long progress = 0;
  while (!execution->finished()) {
    // A question waiting for a 2026-07-28 client ends this call: the
    // client answers it on a retry.
    if (call.stateless) {
      if (auto question = execution->question()) return input_required(*question, execution->id());
    }
    auto now = Clock::now();
    if (until && now >= until) break;
    auto step = std::chrono::milliseconds(500);
    if (until)
      step = std::min(step, std::chrono::duration_cast<std::chrono::milliseconds>(*until - now) +
                                std::chrono::milliseconds(1));
    if (execution->wait_for(step, call.stateless)) continue;
    now = Clock::now();
    if (call.progress_token && now - last_progress >= kProgressEvery) {
      last_progress = now;
      report_progress(call, *execution, ++progress);
    }
  }
  return execution_tool_result(execution->snapshot(), max_output_chars, resources_);
}

Json McpServer::resume_execution(ToolCall& call, const std::string& tool) {
  const std::string& state = *call.request_state;
  std::size_t colon = state.find(':');
  auto execution =
      colon == std::string::npos ? nullptr : pool_.find_execution(state.substr(0, colon));
  if (!execution && slurm_ && colon != std::string::npos) {
    execution = slurm_->find_execution(state.substr(0, colon));
  }
  // Bound to the call that asked: the same kernel (execute) or execution.
  bool same = execution &&
              (tool == "execute" ? call.arguments.value("kernel_id", "") == execution->kernel_id()
                                 : tool == "get_execution" &&
                                       call.arguments.value("execution_id", "") == execution->id());
  const char* kStale =
      "requestState is unknown or expired: the question was answered, timed out, or its cell "
      "ended; get_execution shows the cell";
  if (!same) return tool_error(std::string(tool) + ": " + kStale);
  auto answer = call.input_responses.find("approval");
  // Without an answer the question is asked again (the specification).
  if (answer != call.input_responses.end() &&
      !execution->answer_question(state.substr(colon + 1), *answer)) {
    return tool_error(std::string(tool) + ": " + kStale);
  }
  std::optional<double> wait_s;
  if (tool == "get_execution") wait_s = call.arguments.value("wait_s", 0.0);
  auto max_chars = static_cast<std::size_t>(call.arguments.value("max_output_chars", 20000LL));
  // Cancelling the retry interrupts the cell, whichever engine runs it.
  std::weak_ptr<Kernel> local = pool_.find(execution->kernel_id());
  std::weak_ptr<SlurmKernel> remote;
  if (local.expired() && slurm_) remote = slurm_->find(execution->kernel_id());
  call.session->on_cancel(call.request_id, [this, local, remote, execution] {
    if (execution->finished()) return;
    if (auto live = local.lock()) {
      (void)pool_.interrupt(live, StopReason::kInterrupted);
    } else if (auto job = remote.lock()) {
      (void)job->interrupt(StopReason::kInterrupted);
    }
  });
  Json result = await_execution(call, execution, wait_s, max_chars);
  call.session->forget_cancel(call.request_id);
  return result;
}

Json McpServer::get_execution(ToolCall& call) {
  std::string id = call.arguments["execution_id"];
  auto execution = pool_.find_execution(id);
  if (!execution && slurm_) execution = slurm_->find_execution(id);
  if (!execution) {
    return tool_error("unknown execution_id '" + id +
                      "': the server keeps the newest 256 executions; execute returns the id");
  }
  double wait_s = call.arguments.value("wait_s", 0.0);
  auto max_chars = static_cast<std::size_t>(call.arguments.value("max_output_chars", 20000LL));
  return await_execution(call, execution, wait_s, max_chars);
}

Json McpServer::interrupt(ToolCall& call) {
  std::string id = call.arguments["kernel_id"];
  if (auto remote = slurm_tool("interrupt", call)) return *remote;
  auto kernel = pool_.find(id);
  if (!kernel) return tool_error(unknown_kernel(id));
  std::string running;
  {
    std::lock_guard lock(kernel->mutex);
    if (kernel->running) running = kernel->running->id();
  }
  if (running.empty()) return ok_result(Json{{"interrupted", false}});
  if (auto sent = pool_.interrupt(kernel, StopReason::kInterrupted); !sent) {
    return tool_error("interrupt: " + sent.error().message);
  }
  return ok_result(Json{{"interrupted", true}, {"execution_id", running}});
}

Json McpServer::list_variables(ToolCall& call) {
  std::string id = call.arguments["kernel_id"];
  if (auto remote = slurm_tool("list_variables", call)) return *remote;
  auto kernel = pool_.find(id);
  if (!kernel) return tool_error(unknown_kernel(id));
  auto answer = kernel->manager->inspect_variables(200);
  if (!answer) {
    if (answer.error().code == ErrorCode::kBusy) {
      return tool_error("list_variables: kernel " + id +
                        " is running a cell; ask again when it is idle");
    }
    return tool_error("list_variables: " + answer.error().message);
  }
  Json out{{"variables", answer.value().value("variables", Json::array())}};
  if (answer.value().contains("truncated")) out["truncated"] = answer.value()["truncated"];
  return ok_result(std::move(out));
}

std::optional<std::pair<std::string, DirectoryId>> McpServer::workspace_of(
    const std::string& kernel_id) {
  if (auto kernel = pool_.find(kernel_id)) {
    return std::make_pair(kernel->workspace, kernel->workspace_id);
  }
  if (auto remote = slurm_ ? slurm_->find(kernel_id) : nullptr) {
    return std::make_pair(remote->workspace, remote->workspace_id);
  }
  return std::nullopt;
}

Json McpServer::read_file(ToolCall& call) {
  std::string id = call.arguments["kernel_id"];
  auto workspace = workspace_of(id);
  if (!workspace) return tool_error(unknown_kernel(id));
  auto read = read_workspace_file(workspace->first, workspace->second, call.arguments["path"],
                                  call.arguments.value("offset", 0LL),
                                  call.arguments.value("length", 1LL << 20));
  if (!read) return tool_error("read_file: " + read.error().message);
  Json structured = read.value();
  std::string text = structured["encoding"] == "utf-8"
                         ? structured["content"].get<std::string>()
                         : "[" + std::to_string(structured["length"].get<long long>()) +
                               " bytes of binary data, base64 in structuredContent.content]";
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", text}}})},
              {"structuredContent", std::move(structured)}};
}

Json McpServer::write_file(ToolCall& call) {
  std::string id = call.arguments["kernel_id"];
  auto workspace = workspace_of(id);
  if (!workspace) return tool_error(unknown_kernel(id));
  std::string content = call.arguments["content"];
  if (call.arguments.value("encoding", "utf-8") == "base64") {
    auto decoded = base64_decode(content);
    if (!decoded) return tool_error("write_file: content is not valid (padded, standard) base64");
    content = std::move(*decoded);
  }
  auto written =
      write_workspace_file(workspace->first, workspace->second, call.arguments["path"], content);
  if (!written) return tool_error("write_file: " + written.error().message);
  return ok_result(written.value());
}

}  // namespace o4s::mcp
