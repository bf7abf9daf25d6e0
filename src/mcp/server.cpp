#include "mcp/server.h"

#include <cstdio>
#include <thread>

#include "mcp/tool_schemas.h"

namespace o4s::mcp {

namespace {

// tools/call threads at once: past it, a call is refused, not queued.
constexpr std::size_t kMaxConcurrentCalls = 256;
// Of which one client (session) may hold at most this many: one client
// cannot take every slot from the others.
constexpr int kMaxCallsPerSession = 64;

// The row keeps a preview of the arguments, never a whole file: long
// strings (write_file's content, a long cell) are cut before the row is
// queued, so the queue holds no megabytes.
constexpr std::size_t kAuditStringChars = 4096;

Json trimmed_for_audit(const Json& arguments) {
  if (!arguments.is_object()) return arguments;
  Json out = Json::object();
  for (const auto& [key, value] : arguments.items()) {
    if (value.is_string() && value.get_ref<const std::string&>().size() > kAuditStringChars) {
      const auto& text = value.get_ref<const std::string&>();
      out[key] = text.substr(0, kAuditStringChars) + "...[" +
                 std::to_string(text.size() - kAuditStringChars) + " more bytes]";
    } else {
      out[key] = value;
    }
  }
  return out;
}

bool supported_version(const std::string& version) {
  for (const char* known : kProtocolVersions) {
    if (version == known) return true;
  }
  return false;
}

}  // namespace

Json tool_error(const std::string& message) {
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", message}}})},
              {"isError", true}};
}

McpServer::McpServer(KernelPool& pool, ServerInfo info)
    : pool_(pool),
      info_(std::move(info)),
      resources_(pool.settings().data_dir),
      audit_(pool.store()) {
  register_methods();
  register_tools();
}

McpServer::~McpServer() { wait_for_calls(); }

void McpServer::register_methods() {
  methods_["initialize"] = {
      [this](const std::shared_ptr<Session>& s, const Incoming& in) { return initialize(s, in); }};
  methods_["ping"] = {
      [](const std::shared_ptr<Session>&, const Incoming&) { return Reply::ok(Json::object()); }};
  methods_["tools/list"] = {[](const std::shared_ptr<Session>&, const Incoming&) {
    return Reply::ok(Json{{"tools", tool_definitions()}});
  }};
  methods_["tools/call"] = {
      [this](const std::shared_ptr<Session>& s, const Incoming& in) { return call_tool(s, in); },
      true};
  methods_["resources/list"] = {[this](const std::shared_ptr<Session>&, const Incoming&) {
    return Reply::ok(Json{{"resources", resources_.list()}});
  }};
  methods_["resources/templates/list"] = {[](const std::shared_ptr<Session>&, const Incoming&) {
    return Reply::ok(Json{{"resourceTemplates", Json::array()}});
  }};
  methods_["resources/read"] = {
      [this](const std::shared_ptr<Session>&, const Incoming& in) { return read_resource(in); }};
}

void McpServer::handle_text(const std::shared_ptr<Session>& session, const std::string& text) {
  Json message = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) {
    session->send(error_response(nullptr, rpc_error::kParseError, "Parse error: not valid JSON"));
    return;
  }
  handle(session, std::move(message));
}

void McpServer::handle(const std::shared_ptr<Session>& session, Json message) {
  if (message.is_array()) {
    // JSON-RPC batches left MCP in 2025-06-18.
    session->send(error_response(nullptr, rpc_error::kInvalidRequest,
                                 "Invalid Request: batches are not supported"));
    return;
  }
  Incoming in = classify(std::move(message));
  switch (in.kind) {
    case MessageKind::kInvalid:
      session->send(
          error_response(in.id, rpc_error::kInvalidRequest, "Invalid Request: " + in.error));
      return;
    case MessageKind::kResponse:
      session->deliver_response(in.id, in.message);
      return;
    case MessageKind::kNotification:
      dispatch_notification(session, in);
      return;
    case MessageKind::kRequest:
      dispatch_request(session, std::move(in));
      return;
  }
}

void McpServer::dispatch_notification(const std::shared_ptr<Session>& session, const Incoming& in) {
  if (in.method == "notifications/cancelled") {
    auto id = in.params.find("requestId");
    if (id != in.params.end()) session->cancel(*id);
  }
  // notifications/initialized and any other notification need no answer.
}

void McpServer::dispatch_request(const std::shared_ptr<Session>& session, Incoming in) {
  auto it = methods_.find(in.method);
  if (it == methods_.end()) {
    session->send(
        error_response(in.id, rpc_error::kMethodNotFound, "Method not found: " + in.method));
    return;
  }
  const MethodEntry& entry = it->second;
  auto answer = [session](const Json& id, const Reply& reply) {
    if (reply.error) {
      session->send(error_response(id, reply.error->first, reply.error->second));
    } else {
      session->send(result_response(id, reply.result));
    }
  };
  if (!entry.on_own_thread) {
    answer(in.id, entry.handler(session, in));
    return;
  }
  if (!session->begin_call(kMaxCallsPerSession)) {
    session->send(error_response(in.id, rpc_error::kInternalError,
                                 "too many tool calls at once from this client (64); retry when "
                                 "some ended"));
    return;
  }
  {
    std::lock_guard lock(calls_mutex_);
    if (calls_running_ >= kMaxConcurrentCalls) {
      session->end_call();
      session->send(error_response(in.id, rpc_error::kInternalError,
                                   "too many tool calls at once (256); retry when some ended"));
      return;
    }
    ++calls_running_;
  }
  // A tool call may run for hours; the reader goes on reading (cancels,
  // elicitation answers, other calls).
  std::thread([this, session, handler = entry.handler, in = std::move(in), answer] {
    Reply reply;
    try {
      reply = handler(session, in);
    } catch (const std::exception& error) {
      reply =
          Reply::fail(rpc_error::kInternalError, std::string("internal error: ") + error.what());
    } catch (...) {
      reply = Reply::fail(rpc_error::kInternalError, "internal error");
    }
    answer(in.id, reply);
    session->end_call();
    std::lock_guard lock(calls_mutex_);
    --calls_running_;
    calls_done_.notify_all();
  }).detach();
}

void McpServer::wait_for_calls() {
  std::unique_lock lock(calls_mutex_);
  calls_done_.wait(lock, [this] { return calls_running_ == 0; });
}

Reply McpServer::initialize(const std::shared_ptr<Session>& session, const Incoming& in) {
  auto requested = in.params.find("protocolVersion");
  if (requested == in.params.end() || !requested->is_string()) {
    return Reply::fail(rpc_error::kInvalidParams, "initialize needs a protocolVersion string");
  }
  // The specification: the same version when supported, else the newest
  // this server speaks (the client then decides whether to go on).
  std::string version = requested->get<std::string>();
  if (!supported_version(version)) version = kProtocolVersions[0];
  session->set_initialized(version, in.params.value("capabilities", Json::object()),
                           in.params.value("clientInfo", Json::object()));
  std::fprintf(stderr, "openai4s-mcp: %s connected (protocol %s)\n", session->client_name().c_str(),
               version.c_str());
  Json result{{"protocolVersion", version},
              {"capabilities",
               {{"tools", {{"listChanged", false}}},
                {"resources", {{"listChanged", false}, {"subscribe", false}}}}},
              {"serverInfo", {{"name", info_.name}, {"version", info_.version}}},
              {"instructions",
               "Persistent sandboxed Python and R kernels. create_kernel once, keep its "
               "kernel_id, then execute code; variables persist between calls."}};
  return Reply::ok(std::move(result));
}

Reply McpServer::call_tool(const std::shared_ptr<Session>& session, const Incoming& in) {
  auto name = in.params.find("name");
  if (name == in.params.end() || !name->is_string()) {
    return Reply::fail(rpc_error::kInvalidParams, "tools/call needs a tool name");
  }
  auto tool = tools_.find(name->get<std::string>());
  if (tool == tools_.end()) {
    return Reply::fail(rpc_error::kInvalidParams, "Unknown tool: " + name->get<std::string>());
  }
  Json arguments = in.params.value("arguments", Json::object());
  if (std::string why = check_arguments((*find_tool(tool->first))["inputSchema"], arguments);
      !why.empty()) {
    return Reply::ok(tool_error(tool->first + ": " + why));
  }
  ToolCall call{session, in.id, std::move(arguments), std::nullopt};
  if (auto meta = in.params.find("_meta"); meta != in.params.end() && meta->is_object()) {
    if (auto token = meta->find("progressToken");
        token != meta->end() && (token->is_string() || token->is_number_integer())) {
      call.progress_token = *token;
    }
  }
  Json result = tool->second(call);
  audit_tool_call(session, tool->first, call.arguments, result);
  return Reply::ok(std::move(result));
}

void McpServer::audit_tool_call(const std::shared_ptr<Session>& session, const std::string& tool,
                                const Json& arguments, const Json& result) {
  auto store = pool_.store();
  std::unique_lock made_once(audit_mutex_);
  std::string frame = session->audit_frame();
  if (frame.empty()) {
    store::NewFrame made;
    made.kind = "turn";
    made.name = "mcp connection: " + session->client_name();
    auto created = store->new_frame(made);
    if (!created) return;
    frame = created.value();
    session->set_audit_frame(frame);
  }
  made_once.unlock();
  store::HostCallRecord record;
  record.method = "mcp." + tool;
  record.args = Json::array({trimmed_for_audit(arguments)});
  record.ok = !result.value("isError", false);
  record.frame_id = frame;
  Json outcome = Json::object();
  if (auto structured = result.find("structuredContent"); structured != result.end()) {
    for (const char* key : {"status", "execution_id", "kernel_id"}) {
      if (structured->contains(key)) outcome[key] = (*structured)[key];
    }
  } else if (!record.ok) {
    outcome["error"] = result["content"][0].value("text", "");
  }
  record.result = std::move(outcome);
  audit_.record(std::move(record));
}

Reply McpServer::read_resource(const Incoming& in) {
  auto uri = in.params.find("uri");
  if (uri == in.params.end() || !uri->is_string()) {
    return Reply::fail(rpc_error::kInvalidParams, "resources/read needs a uri string");
  }
  auto read = resources_.read(uri->get<std::string>());
  // The specification's "resource not found" code.
  if (!read) return Reply::fail(-32002, read.error().message);
  return Reply::ok(std::move(read.value()));
}

}  // namespace o4s::mcp
