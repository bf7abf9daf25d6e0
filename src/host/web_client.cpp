#include "host/web_client.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <memory>
#include <mutex>

namespace o4s::host {

namespace {

using Clock = std::chrono::steady_clock;

struct EasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

constexpr const char* kDefaultUserAgent = "openai4s-host/1 (+web_fetch; libcurl)";

// What one hop's callbacks share with the loop.
struct HopState {
  const EgressPolicy* policy = nullptr;
  std::string host;
  std::string refusal;  // set when an address was refused
  const std::function<bool(std::string_view)>* sink = nullptr;
  const WebRequest* request = nullptr;
  CURL* handle = nullptr;
  std::int64_t bytes = 0;
  bool over_limit = false;
  bool sink_stopped = false;
  bool interrupted = false;
};

// After DNS, before each connect (also each happy-eyeballs attempt): the
// address itself is judged, so no spelling of a name reaches a private one.
curl_socket_t open_socket(void* data, curlsocktype, curl_sockaddr* address) {
  auto* hop = static_cast<HopState*>(data);
  auto ip = ip_of(&address->addr);
  if (!ip) {
    hop->refusal = "'" + hop->host + "': not an IPv4 or IPv6 address";
    return CURL_SOCKET_BAD;
  }
  EgressDecision decision = decide_address(*hop->policy, hop->host, *ip);
  if (!decision.allowed) {
    hop->refusal = decision.message;
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

bool body_is_wanted(CURL* handle) {
  long status = 0;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  return status >= 200 && status < 300;
}

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* hop = static_cast<HopState*>(user);
  const size_t length = size * count;
  if (!body_is_wanted(hop->handle)) return length;  // a redirect's or an error page's body
  std::string_view chunk(data, length);
  const std::int64_t room = hop->request->max_bytes - hop->bytes;
  if (static_cast<std::int64_t>(length) > room) {
    hop->over_limit = true;
    chunk = chunk.substr(0, static_cast<size_t>(room > 0 ? room : 0));
  }
  if (!chunk.empty() && !(*hop->sink)(chunk)) {
    hop->sink_stopped = true;
    return 0;
  }
  hop->bytes += static_cast<std::int64_t>(chunk.size());
  return hop->over_limit ? 0 : length;  // 0 stops the transfer
}

// libcurl's progress callback: a non-zero return aborts the transfer.
int check_cancelled(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* hop = static_cast<HopState*>(user);
  if (hop->request->cancelled && hop->request->cancelled()) hop->interrupted = true;
  return hop->interrupted ? 1 : 0;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

void configure(CURL* handle, const std::string& url, const WebRequest& request, HopState& hop,
               std::chrono::milliseconds remaining) {
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);  // each hop is judged here
  // A proxy would be the address curl connects to; the policy must see the
  // real one. The host fetches directly.
  curl_easy_setopt(handle, CURLOPT_PROXY, "");
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(remaining.count()));
  curl_easy_setopt(handle, CURLOPT_USERAGENT,
                   request.user_agent.empty() ? kDefaultUserAgent : request.user_agent.c_str());
  curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, &open_socket);
  curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, &hop);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &write_body);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &hop);
  if (request.cancelled) {
    curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, &check_cancelled);
    curl_easy_setopt(handle, CURLOPT_XFERINFODATA, &hop);
    curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  }
  if (!request.truncate_at_max) {
    // Refused from the Content-Length alone, before any byte is read.
    curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_bytes));
  }
}

// Marks `response` failed; true, so a hop can `return failed(...)`.
bool failed(WebResponse& response, WebFailure failure, std::string message) {
  response.failure = failure;
  response.message = std::move(message);
  return true;
}

std::string info_string(CURL* handle, CURLINFO info) {
  char* text = nullptr;
  curl_easy_getinfo(handle, info, &text);
  return text != nullptr ? std::string(text) : std::string();
}

// One hop's ending: false to follow `next`, true when `response` is final.
bool finish_hop(CURL* handle, CURLcode code, const HopState& hop, const WebRequest& request,
                WebResponse& response, std::string& next) {
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response.status);
  response.content_type = info_string(handle, CURLINFO_CONTENT_TYPE);
  response.bytes = hop.bytes;
  const std::string limit = std::to_string(request.max_bytes);
  if (hop.interrupted) return failed(response, WebFailure::kInterrupted, "interrupted");
  if (hop.sink_stopped) return failed(response, WebFailure::kSink, "the body could not be stored");
  if (hop.over_limit || code == CURLE_FILESIZE_EXCEEDED) {
    if (request.truncate_at_max) {
      response.truncated = true;
      return true;
    }
    return failed(response, WebFailure::kTooLarge,
                  "the body is larger than max_bytes (" + limit + " bytes)");
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return failed(response, WebFailure::kTimeout,
                  "timed out after " + std::to_string(request.timeout.count()) + " ms");
  }
  if (code != CURLE_OK) {
    if (!hop.refusal.empty()) {
      return failed(response, WebFailure::kEgress, "refused by the egress policy: " + hop.refusal);
    }
    return failed(response, WebFailure::kNetwork, curl_easy_strerror(code));
  }
  if (response.status >= 300 && response.status < 400) {
    next = info_string(handle, CURLINFO_REDIRECT_URL);
    if (!next.empty()) return false;
  }
  if (response.status < 200 || response.status >= 300) {
    return failed(response, WebFailure::kHttpStatus,
                  "HTTP " + std::to_string(response.status) + " from " + response.final_url);
  }
  return true;
}

}  // namespace

std::string_view failure_name(WebFailure failure) {
  switch (failure) {
    case WebFailure::kNone:
      return "ok";
    case WebFailure::kEgress:
      return "refused by egress policy";
    case WebFailure::kTimeout:
      return "timeout";
    case WebFailure::kTooLarge:
      return "too large";
    case WebFailure::kHttpStatus:
      return "http error";
    case WebFailure::kNetwork:
      return "network error";
    case WebFailure::kSink:
      return "write error";
    case WebFailure::kInterrupted:
      return "interrupted";
  }
  return "error";
}

WebResponse web_get(const EgressPolicy& policy, const WebRequest& request,
                    const std::function<bool(std::string_view)>& sink) {
  global_init();
  WebResponse response;
  const auto deadline = Clock::now() + request.timeout;
  std::string url = request.url;
  for (int hop_index = 0; hop_index <= request.max_redirects; ++hop_index) {
    if (request.cancelled && request.cancelled()) {
      failed(response, WebFailure::kInterrupted, "interrupted");
      return response;
    }
    EgressDecision decision = decide_url(policy, url);
    if (!decision.allowed) {
      failed(response, WebFailure::kEgress, "refused by the egress policy: " + decision.message);
      return response;
    }
    response.final_url = decision.url;
    response.egress_basis = decision.basis;
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (remaining.count() <= 0) {
      failed(response, WebFailure::kTimeout,
             "timed out after " + std::to_string(request.timeout.count()) + " ms");
      return response;
    }
    EasyHandle handle(curl_easy_init());
    if (!handle) {
      failed(response, WebFailure::kNetwork, "libcurl could not start");
      return response;
    }
    HopState hop{&policy, decision.host, {}, &sink, &request, handle.get()};
    configure(handle.get(), decision.url, request, hop, remaining);
    const CURLcode code = curl_easy_perform(handle.get());
    std::string next;
    if (finish_hop(handle.get(), code, hop, request, response, next)) return response;
    response.redirects.push_back(next);
    url = next;
  }
  failed(response, WebFailure::kNetwork,
         "more than " + std::to_string(request.max_redirects) + " redirects");
  return response;
}

}  // namespace o4s::host
