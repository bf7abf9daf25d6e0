// One client connection's protocol state: what the handshake settled
// (version, the client's capabilities), the writer its messages go out
// through, the requests the server sent the client (elicitations) awaiting
// their answers, and the client's requests that a cancellation can stop.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace o4s::mcp {

using Json = nlohmann::json;

class Session {
 public:
  // Writes one serialised message; false when the client is gone. Called
  // under the session's write lock, so messages never interleave.
  using Writer = std::function<bool(const std::string& message)>;

  explicit Session(Writer writer);
  // A channel of `parent` (one HTTP request's response stream): messages
  // go out through `writer`, the protocol state is the parent's, and
  // closing it cancels only the requests registered through it.
  Session(Writer writer, std::shared_ptr<Session> parent);

  // Serialises (invalid UTF-8 replaced, never thrown) and writes.
  bool send(const Json& message);
  void notify(const std::string& method, Json params);
  // A request to the client, answered through deliver_response; fails on
  // timeout, on a client error, when the session closes, or (checked a few
  // times a second, outside the session's lock) once `give_up` says so.
  Result<Json> ask(const std::string& method, Json params, std::chrono::seconds timeout,
                   const std::function<bool()>& give_up = {});
  void deliver_response(const Json& id, const Json& message);

  // A running request that notifications/cancelled may stop.
  void on_cancel(const Json& request_id, std::function<void()> cancel);
  void forget_cancel(const Json& request_id);
  void cancel(const Json& request_id);

  void close();
  bool closed();

  // The handshake's outcome.
  void set_initialized(std::string version, Json client_capabilities, Json client_info);
  std::string protocol_version();
  bool client_can_elicit();
  std::string client_name();
  // The connection's frame in the store's audit log ("" until made).
  std::string audit_frame();
  void set_audit_frame(std::string frame_id);
  // A share of the server's call threads per client: false when this
  // session already runs `limit` calls; else counted until end_call().
  bool begin_call(int limit);
  void end_call();

 private:
  Session& root() { return parent_ ? *parent_ : *this; }
  void cancel_key(const std::string& key);

  Writer writer_;
  std::shared_ptr<Session> parent_;
  std::atomic<int> calls_running_{0};  // on the root
  std::mutex write_mutex_;
  std::vector<std::string> own_cancels_;  // a channel's registrations (id keys)

  std::mutex mutex_;  // guards what follows
  std::condition_variable answered_;
  long long next_id_ = 1;
  std::map<std::string, std::optional<Json>> pending_;  // id key -> the answer once it came
  std::map<std::string, std::function<void()>> cancels_;
  // Cancels that came before their request registered (newest last,
  // bounded): on_cancel runs the cancel at once for these.
  std::deque<std::string> early_cancels_;
  bool closed_ = false;
  std::atomic<bool> closed_flag_{false};  // closed_, readable under the root's lock
  std::string version_;
  Json client_capabilities_ = Json::object();
  Json client_info_ = Json::object();
  std::string audit_frame_;
};

}  // namespace o4s::mcp
