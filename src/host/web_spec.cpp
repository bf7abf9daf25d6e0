#include "host/web_spec.h"

#include <cmath>

#include "base/ascii.h"
#include "host/dispatcher.h"

namespace o4s::host {

namespace {

constexpr std::size_t kMaxUrlBytes = 8192;
constexpr std::size_t kMaxUserAgentBytes = 256;
constexpr double kMaxTimeoutSeconds = 3600;

Error bad(const char* method, const std::string& what) {
  return handler_error(HandlerErrorKind::kValue, std::string(method) + ": " + what);
}

}  // namespace

Result<long long> bounded_integer(const char* method, const Json& spec, const char* key,
                                  long long fallback, long long most) {
  auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > most) {
    return bad(method, std::string(key) + " must be a whole number from 1 to " +
                           std::to_string(most) + ", not " + it->dump().substr(0, 40));
  }
  return it->get<long long>();
}

Result<WebSpec> web_spec(const char* method, const Json& args, double default_timeout) {
  const Json spec = !args.empty() && args[0].is_object() ? args[0] : Json::object();
  WebSpec out;
  auto url = spec.find("url");
  if (url == spec.end() || !url->is_string() || url->get<std::string>().empty()) {
    return bad(method, "a 'url' (http or https) is required");
  }
  out.request.url = url->get<std::string>();
  if (out.request.url.size() > kMaxUrlBytes) {
    return bad(method, "the url is " + std::to_string(out.request.url.size()) +
                           " bytes; the limit is " + std::to_string(kMaxUrlBytes));
  }
  double timeout = default_timeout;
  if (auto it = spec.find("timeout"); it != spec.end() && !it->is_null()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0 ||
        it->get<double>() > kMaxTimeoutSeconds) {
      return bad(method, "timeout must be a number of seconds above 0 and at most 3600");
    }
    timeout = it->get<double>();
  }
  out.request.timeout = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));
  if (auto it = spec.find("method"); it != spec.end() && !it->is_null()) {
    if (!it->is_string() || ascii::lowered(it->get<std::string>()) != "get") {
      return bad(method, "only GET is supported, not " + it->dump().substr(0, 40));
    }
  }
  if (auto it = spec.find("user_agent"); it != spec.end() && !it->is_null()) {
    const std::string agent = it->is_string() ? it->get<std::string>() : std::string("\n");
    if (agent.size() > kMaxUserAgentBytes || agent.find_first_of("\r\n") != std::string::npos) {
      return bad(method, "user_agent must be one line of at most 256 bytes");
    }
    out.request.user_agent = agent;
  }
  return out;
}

}  // namespace o4s::host
