// The arguments web_fetch and web_download share, checked once: a cell's
// bad value is a clear ValueError, never a fetch of something else.
#pragma once

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "host/web_client.h"

namespace o4s::host {

struct WebSpec {
  WebRequest request;  // url, timeout, user_agent filled; bounds left to the caller
};

// spec.url (http/https, at most 8 KiB), spec.timeout (seconds, default
// `default_timeout`, at most an hour), spec.method (GET only),
// spec.user_agent (one line, at most 256 bytes).
Result<WebSpec> web_spec(const char* method, const nlohmann::json& args, double default_timeout);

// spec[key]: a positive integer up to `most`, `fallback` when absent or null.
Result<long long> bounded_integer(const char* method, const nlohmann::json& spec, const char* key,
                                  long long fallback, long long most);

}  // namespace o4s::host
