#include "mcp/session.h"

#include <algorithm>

#include "mcp/json_rpc.h"
#include "mcp/protocol_era.h"

namespace o4s::mcp {

namespace {

// Cancels remembered for requests not (yet) registered.
constexpr std::size_t kEarlyCancelsKept = 256;

}  // namespace

Session::Session(Writer writer) : writer_(std::move(writer)) {}

Session::Session(Writer writer, std::shared_ptr<Session> parent)
    : writer_(std::move(writer)), parent_(std::move(parent)) {}

bool Session::send(const Json& message) {
  // Cell output can hold invalid UTF-8; a reply must still go out.
  std::string text = message.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::lock_guard lock(write_mutex_);
  if (closed()) return false;
  return writer_(text);
}

void Session::notify(const std::string& method, Json params) {
  (void)send(notification(method, std::move(params)));
}

Result<Json> Session::ask(const std::string& method, Json params, std::chrono::seconds timeout,
                          const std::function<bool()>& give_up) {
  Session& state = root();
  if (closed()) return make_error(ErrorCode::kNotAlive, "the client is gone");
  std::string key;
  Json id;
  {
    std::lock_guard lock(state.mutex_);
    id = "o4s-" + std::to_string(state.next_id_++);
    key = id_key(id);
    state.pending_[key] = std::nullopt;
  }
  if (!send(request(id, method, std::move(params)))) {
    std::lock_guard lock(state.mutex_);
    state.pending_.erase(key);
    return make_error(ErrorCode::kNotAlive, "the client is gone");
  }
  std::unique_lock lock(state.mutex_);
  // This channel's closing (a closed HTTP stream) wakes the wait too.
  auto gone = [&] { return state.closed_ || (parent_ && closed_flag_.load()); };
  auto ready = [&] { return gone() || state.pending_[key].has_value(); };
  auto until = std::chrono::steady_clock::now() + timeout;
  bool came = false;
  bool gave_up = false;
  while (!came && std::chrono::steady_clock::now() < until) {
    auto slice = std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(250), until - std::chrono::steady_clock::now());
    came = state.answered_.wait_for(lock, slice, ready);
    if (came || !give_up) continue;
    lock.unlock();
    gave_up = give_up();
    lock.lock();
    if (gave_up) break;
  }
  if (gave_up && !state.pending_[key].has_value()) {
    state.pending_.erase(key);
    return make_error(ErrorCode::kCancelled, "the cell was stopped while it waited for an answer");
  }
  came = came || ready();
  std::optional<Json> answer = std::move(state.pending_[key]);
  state.pending_.erase(key);
  if (!came || !answer) {
    return make_error(gone() ? ErrorCode::kNotAlive : ErrorCode::kTimeout,
                      gone() ? "the client is gone" : "the client did not answer in time");
  }
  if (auto error = answer->find("error"); error != answer->end()) {
    auto message = error->is_object() ? error->find("message") : error->end();
    bool text = error->is_object() && message != error->end() && message->is_string();
    return make_error(ErrorCode::kProtocol,
                      "the client refused: " + (text ? message->get<std::string>() : "?"));
  }
  auto result = answer->find("result");
  return result != answer->end() ? *result : Json::object();
}

void Session::deliver_response(const Json& id, const Json& message) {
  if (parent_) return parent_->deliver_response(id, message);
  std::lock_guard lock(mutex_);
  auto it = pending_.find(id_key(id));
  if (it == pending_.end()) return;  // late or unknown: dropped
  it->second = message;
  answered_.notify_all();
}

void Session::on_cancel(const Json& request_id, std::function<void()> cancel) {
  if (parent_) {
    {
      std::lock_guard lock(mutex_);
      own_cancels_.push_back(id_key(request_id));
    }
    return parent_->on_cancel(request_id, std::move(cancel));
  }
  {
    std::lock_guard lock(mutex_);
    auto early = std::find(early_cancels_.begin(), early_cancels_.end(), id_key(request_id));
    if (early == early_cancels_.end()) {
      cancels_[id_key(request_id)] = std::move(cancel);
      return;
    }
    early_cancels_.erase(early);
  }
  cancel();  // the client cancelled before the call got here
}

void Session::forget_cancel(const Json& request_id) {
  if (parent_) return parent_->forget_cancel(request_id);
  std::lock_guard lock(mutex_);
  cancels_.erase(id_key(request_id));
  std::erase(early_cancels_, id_key(request_id));
}

void Session::cancel(const Json& request_id) {
  if (parent_) return parent_->cancel(request_id);
  std::function<void()> cancel;
  {
    std::lock_guard lock(mutex_);
    auto it = cancels_.find(id_key(request_id));
    if (it == cancels_.end()) {
      // Perhaps not registered yet (a cell being started): remembered.
      early_cancels_.push_back(id_key(request_id));
      if (early_cancels_.size() > kEarlyCancelsKept) early_cancels_.pop_front();
      return;
    }
    cancel = it->second;
  }
  cancel();
}

void Session::close() {
  if (parent_) {
    // A closed response stream cancels its own request (HTTP: closing the
    // stream interrupts the cell), and wakes its elicitation waits.
    std::vector<std::string> mine;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      closed_flag_ = true;
      mine.swap(own_cancels_);
    }
    {
      std::lock_guard lock(parent_->mutex_);
      parent_->answered_.notify_all();
    }
    for (const auto& key : mine) parent_->cancel_key(key);
    return;
  }
  std::map<std::string, std::function<void()>> cancels;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    cancels.swap(cancels_);
  }
  answered_.notify_all();
  // A client that went away cancels what it was waiting for.
  for (auto& [id, cancel] : cancels) cancel();
}

bool Session::closed() {
  if (parent_ && parent_->closed()) return true;
  std::lock_guard lock(mutex_);
  return closed_;
}

void Session::cancel_key(const std::string& key) {
  std::function<void()> cancel;
  {
    std::lock_guard lock(mutex_);
    auto it = cancels_.find(key);
    if (it == cancels_.end()) return;
    cancel = it->second;
  }
  cancel();
}

void Session::set_initialized(std::string version, Json client_capabilities, Json client_info) {
  if (parent_) return parent_->set_initialized(version, client_capabilities, client_info);
  std::lock_guard lock(mutex_);
  version_ = std::move(version);
  client_capabilities_ =
      client_capabilities.is_object() ? std::move(client_capabilities) : Json::object();
  client_info_ = client_info.is_object() ? std::move(client_info) : Json::object();
}

std::string Session::protocol_version() {
  if (parent_) return parent_->protocol_version();
  std::lock_guard lock(mutex_);
  return version_;
}

bool Session::client_can_elicit() {
  if (parent_) return parent_->client_can_elicit();
  std::lock_guard lock(mutex_);
  return can_elicit_form(client_capabilities_);
}

std::string Session::client_name() {
  if (parent_) return parent_->client_name();
  std::lock_guard lock(mutex_);
  auto name = client_info_.find("name");
  return name != client_info_.end() && name->is_string() ? name->get<std::string>()
                                                         : std::string("unknown client");
}

}  // namespace o4s::mcp

namespace o4s::mcp {

std::string Session::audit_frame() {
  if (parent_) return parent_->audit_frame();
  std::lock_guard lock(mutex_);
  return audit_frame_;
}

void Session::set_audit_frame(std::string frame_id) {
  if (parent_) return parent_->set_audit_frame(std::move(frame_id));
  std::lock_guard lock(mutex_);
  audit_frame_ = std::move(frame_id);
}

bool Session::begin_call(int limit) {
  std::atomic<int>& running = root().calls_running_;
  int now = running.load();
  do {
    if (now >= limit) return false;
  } while (!running.compare_exchange_weak(now, now + 1));
  return true;
}

void Session::end_call() { root().calls_running_ -= 1; }

}  // namespace o4s::mcp
