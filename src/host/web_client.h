// The host's one HTTP client (libcurl), for web_fetch and web_download and
// any later host-side download: GET only, http and https only, no proxy,
// every redirect hop re-judged by the egress policy before it is followed
// and every address judged after DNS just before its connect (curl's
// opensocket callback), a byte bound counted as the body arrives (after
// content decoding, so a compressed bomb is bounded too) and one deadline
// for the whole chain of hops.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "host/egress_policy.h"

namespace o4s::host {

struct WebRequest {
  std::string url;
  std::int64_t max_bytes = 0;  // of the (decoded) body
  // Past max_bytes: true stops quietly and marks the response truncated
  // (a page to read); false fails the request (a file to keep).
  bool truncate_at_max = false;
  std::chrono::milliseconds timeout{30'000};  // the whole chain of hops
  std::string user_agent;                     // empty: the default
  int max_redirects = 5;
  // Polled while the transfer runs (at least about once a second, however
  // slowly the body trickles); true stops it as kInterrupted.
  std::function<bool()> cancelled;
};

// Why a request did not succeed; kNone when it did.
enum class WebFailure {
  kNone,
  kEgress,
  kTimeout,
  kTooLarge,
  kHttpStatus,
  kNetwork,
  kSink,
  kInterrupted
};

struct WebResponse {
  WebFailure failure = WebFailure::kNone;
  std::string message;  // when failed: one line for the cell
  long status = 0;      // the last HTTP status seen (0: none)
  std::string final_url;
  std::string content_type;
  std::string egress_basis;  // what allowed the last hop (egress_policy.h)
  std::int64_t bytes = 0;    // body bytes handed to the sink
  bool truncated = false;
  std::vector<std::string> redirects;  // every URL followed, in order
};

// Hands the final response's body to `sink` in chunks (a redirect's or an
// error page's body never reaches it); the sink returns false to stop
// (then failure is kSink). Blocks for at most about request.timeout.
WebResponse web_get(const EgressPolicy& policy, const WebRequest& request,
                    const std::function<bool(std::string_view chunk)>& sink);

// A short name of a failure, for results and the audit log.
std::string_view failure_name(WebFailure failure);

}  // namespace o4s::host
