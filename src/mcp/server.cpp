#include "mcp/server.h"

#include <algorithm>
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

// Methods a handshake session may send before initialize (the
// specification: pings; discover is era-neutral).
bool allowed_before_initialize(const std::string& method) {
  return method == "initialize" || method == "ping" || method == "server/discover";
}

constexpr const char* kInstructions =
    "Persistent sandboxed Python and R kernels. create_kernel once, keep its kernel_id, then "
    "execute code; variables persist between calls.";

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
  methods_["server/discover"] = {
      [this](const std::shared_ptr<Session>&, const Incoming&) { return discover(); }};
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

std::optional<Json> McpServer::refuse_request(const std::shared_ptr<Session>& session,
                                              const Incoming& in) {
  if (auto version = stateless_version(in.params)) {
    if (*version != kStatelessVersion) return unsupported_version_error(in.id, *version);
    return std::nullopt;
  }
  // An unknown method is answered as one (-32601), whatever the state.
  if (session->protocol_version().empty() && !allowed_before_initialize(in.method) &&
      methods_.count(in.method) != 0) {
    return error_response(in.id, rpc_error::kInvalidRequest,
                          "Invalid Request: the session is not initialized; send initialize "
                          "first (or, in protocol 2026-07-28, the version in each request's "
                          "_meta)");
  }
  return std::nullopt;
}

void McpServer::dispatch_request(const std::shared_ptr<Session>& session, Incoming in) {
  if (auto refused = refuse_request(session, in)) {
    session->send(*refused);
    return;
  }
  auto it = methods_.find(in.method);
  if (it == methods_.end()) {
    session->send(
        error_response(in.id, rpc_error::kMethodNotFound, "Method not found: " + in.method));
    return;
  }
  const MethodEntry& entry = it->second;
  const bool stateless = stateless_version(in.params).has_value();
  auto answer = [session, stateless, method = in.method, info = server_info()](const Json& id,
                                                                               Reply& reply) {
    if (reply.error) {
      session->send(error_response(id, reply.error->first, reply.error->second));
      return;
    }
    if (stateless) stamp_stateless_result(method, reply.result, info);
    session->send(result_response(id, reply.result));
  };
  if (!entry.on_own_thread) {
    Reply reply = entry.handler(session, in);
    answer(in.id, reply);
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

void McpServer::drain_for_exit(std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  {
    std::unique_lock lock(calls_mutex_);
    calls_done_.wait_until(lock, until, [this] { return calls_running_ == 0; });
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
  if (!audit_.flush(std::max(left, std::chrono::milliseconds(0)))) {
    std::fprintf(stderr, "openai4s-mcp: audit rows still queued at exit\n");
  }
}

Reply McpServer::initialize(const std::shared_ptr<Session>& session, const Incoming& in) {
  auto requested = in.params.find("protocolVersion");
  if (requested == in.params.end() || !requested->is_string()) {
    return Reply::fail(rpc_error::kInvalidParams, "initialize needs a protocolVersion string");
  }
  // The specification: the same version when supported, else the newest
  // this server speaks (the client then decides whether to go on).
  std::string version = requested->get<std::string>();
  if (!supported_handshake_version(version)) version = kProtocolVersions[0];
  session->set_initialized(version, in.params.value("capabilities", Json::object()),
                           in.params.value("clientInfo", Json::object()));
  std::fprintf(stderr, "openai4s-mcp: %s connected (protocol %s)\n", session->client_name().c_str(),
               version.c_str());
  Json result{{"protocolVersion", version},
              {"capabilities",
               {{"tools", {{"listChanged", false}}},
                {"resources", {{"listChanged", false}, {"subscribe", false}}}}},
              {"serverInfo", server_info()},
              {"instructions", kInstructions}};
  return Reply::ok(std::move(result));
}

Json McpServer::server_info() const {
  return Json{{"name", info_.name}, {"version", info_.version}};
}

Reply McpServer::discover() {
  // The stateless revisions only: a handshake revision is reached by
  // initialize, which a client that probes with discover falls back to.
  return Reply::ok(
      Json{{"supportedVersions", Json::array({kStatelessVersion})},
           {"capabilities", {{"tools", Json::object()}, {"resources", Json::object()}}},
           {"instructions", kInstructions}});
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
  ToolCall call;
  call.session = session;
  call.request_id = in.id;
  call.arguments = std::move(arguments);
  if (auto meta = in.params.find("_meta"); meta != in.params.end() && meta->is_object()) {
    if (auto token = meta->find("progressToken");
        token != meta->end() && (token->is_string() || token->is_number_integer())) {
      call.progress_token = *token;
    }
  }
  if (stateless_version(in.params)) {
    call.stateless = true;
    call.client_capabilities = stateless_capabilities(in.params);
    if (auto state = in.params.find("requestState"); state != in.params.end()) {
      if (!state->is_string()) {
        return Reply::fail(rpc_error::kInvalidParams, "requestState must be a string");
      }
      call.request_state = state->get<std::string>();
    }
    if (auto answers = in.params.find("inputResponses");
        answers != in.params.end() && answers->is_object()) {
      call.input_responses = *answers;
    }
  }
  Json result = call.request_state ? resume_execution(call, tool->first) : tool->second(call);
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
    std::string era = session->protocol_version().empty() ? " (stateless)" : "";
    made.name = "mcp connection: " + session->client_name() + era;
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
  } else if (result.value("resultType", "") == "input_required") {
    outcome["status"] = "input_required";
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
