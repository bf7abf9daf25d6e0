// The handlers of exec_background, exec_peek, exec_interrupt, exec_list:
// argument checks and the kernel's job registry (CallContext::background).
#include "host/background_jobs.h"
#include "host/dispatcher.h"

namespace o4s::host {

namespace {

Json no_jobs(const std::string& method) {
  return Json{{"error", method + ": this kernel cannot run background jobs (its front door gave "
                                 "the host no way to start a worker; a background job cannot "
                                 "start another)"}};
}

Json unknown_job(const std::string& method, const std::string& id) {
  return Json{{"error", method + ": no background job '" + id +
                            "' in this kernel (host.exec_list() lists them)"}};
}

// The exec_id argument: a string first argument, else spec.exec_id.
Result<std::string> exec_id(const std::string& method, const Json& args) {
  if (!args.empty() && args[0].is_string()) return args[0].get<std::string>();
  if (!args.empty() && args[0].is_object()) {
    auto it = args[0].find("exec_id");
    if (it != args[0].end() && it->is_string()) return it->get<std::string>();
  }
  return handler_error(HandlerErrorKind::kValue,
                       method + ": an exec_id (the string exec_background returned) is required");
}

}  // namespace

Result<Json> exec_background(HostDispatcher& host, const Json& args, const CallContext& context) {
  const Json spec = !args.empty() && args[0].is_object() ? args[0] : Json::object();
  auto code = spec.find("code");
  if (code == spec.end() || !code->is_string()) {
    return handler_error(HandlerErrorKind::kValue,
                         "exec_background: 'code' must be a string of code to run");
  }
  if (code->get_ref<const std::string&>().find_first_not_of(" \t\r\n") == std::string::npos) {
    return handler_error(HandlerErrorKind::kValue, "exec_background: 'code' is empty");
  }
  auto origin = spec.find("origin");
  std::string origin_text =
      origin != spec.end() && origin->is_string() ? origin->get<std::string>() : "agent";
  if (!context.background) return no_jobs("exec_background");
  JobCaller caller{host.weak_from_this(), context.frame_id};
  return context.background->start(code->get<std::string>(), origin_text, std::move(caller),
                                   context.settings);
}

Result<Json> exec_peek(HostDispatcher&, const Json& args, const CallContext& context) {
  auto id = exec_id("exec_peek", args);
  if (!id) return std::move(id).error();
  if (!context.background) return no_jobs("exec_peek");
  auto job = context.background->peek(id.value());
  return job ? std::move(*job) : unknown_job("exec_peek", id.value());
}

Result<Json> exec_interrupt(HostDispatcher&, const Json& args, const CallContext& context) {
  auto id = exec_id("exec_interrupt", args);
  if (!id) return std::move(id).error();
  if (!context.background) return no_jobs("exec_interrupt");
  auto job = context.background->interrupt(id.value());
  return job ? std::move(*job) : unknown_job("exec_interrupt", id.value());
}

Result<Json> exec_list(HostDispatcher&, const Json&, const CallContext& context) {
  if (!context.background) return Json::array();
  return context.background->list();
}

}  // namespace o4s::host
