#include "support/fake_transport.h"

namespace o4s::testing {

void FakeTransport::push(Item item) {
  {
    std::lock_guard lock(mutex_);
    script_.push_back(std::move(item));
  }
  changed_.notify_all();
}

void FakeTransport::push_line(std::string line) { push(std::move(line)); }

std::string FakeTransport::last_execute_id_locked() const {
  for (auto it = written_.rbegin(); it != written_.rend(); ++it) {
    Json frame = Json::parse(*it, nullptr, false);
    if (proto::frame_type(frame) == "execute") return proto::frame_string(frame, "id");
  }
  return {};
}

void FakeTransport::push_frame(const Json& frame) { push(proto::encode_frame(frame)); }

void FakeTransport::push_error(Error error) { push(std::move(error)); }

void FakeTransport::push_end_of_stream() { push(EndOfStream{}); }

void FakeTransport::set_when_empty(WhenEmpty mode) {
  {
    std::lock_guard lock(mutex_);
    when_empty_ = mode;
  }
  changed_.notify_all();
}

void FakeTransport::set_auto_initialize(bool on) {
  std::lock_guard lock(mutex_);
  auto_initialize_ = on;
}

void FakeTransport::set_responder(Responder responder) {
  std::lock_guard lock(mutex_);
  responder_ = std::move(responder);
}

void FakeTransport::fail_writes(std::optional<Error> error) {
  std::lock_guard lock(mutex_);
  write_error_ = std::move(error);
}

void FakeTransport::set_interrupt_result(bool delivered) {
  std::lock_guard lock(mutex_);
  interrupt_result_ = delivered;
}

void FakeTransport::set_stderr(std::optional<kernel::StderrSnapshot> snapshot) {
  std::lock_guard lock(mutex_);
  stderr_ = std::move(snapshot);
}

void FakeTransport::set_alive(bool alive) {
  std::lock_guard lock(mutex_);
  alive_ = alive;
}

void FakeTransport::set_exit_lag(int polls) {
  std::lock_guard lock(mutex_);
  exit_lag_ = polls;
}

void FakeTransport::set_exit_status(std::optional<int> status) {
  std::lock_guard lock(mutex_);
  exit_status_ = status;
}

std::vector<std::string> FakeTransport::written_lines() const {
  std::lock_guard lock(mutex_);
  return written_;
}

std::vector<Json> FakeTransport::written_frames() const {
  std::vector<Json> frames;
  for (const auto& line : written_lines()) {
    frames.push_back(Json::parse(line, nullptr, /*allow_exceptions=*/false));
  }
  return frames;
}

std::vector<Json> FakeTransport::written_frames_of_type(std::string_view type) const {
  std::vector<Json> out;
  for (auto& frame : written_frames()) {
    if (proto::frame_type(frame) == type) out.push_back(std::move(frame));
  }
  return out;
}

bool FakeTransport::wait_for_frame(std::string_view type, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    for (const auto& line : written_) {
      Json frame = Json::parse(line, nullptr, false);
      if (proto::frame_type(frame) == type) return true;
    }
    return false;
  });
}

bool FakeTransport::wait_for_blocked_reader(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return blocked_readers_ > 0; });
}

int FakeTransport::kill_calls() const {
  std::lock_guard lock(mutex_);
  return kill_calls_;
}

int FakeTransport::close_calls() const {
  std::lock_guard lock(mutex_);
  return close_calls_;
}

std::optional<bool> FakeTransport::last_close_graceful() const {
  std::lock_guard lock(mutex_);
  return last_close_graceful_;
}

Status FakeTransport::write_line(std::string_view line) {
  Responder responder;
  bool auto_initialize;
  {
    std::lock_guard lock(mutex_);
    if (write_error_) return *write_error_;
    written_.emplace_back(line);
    responder = responder_;
    auto_initialize = auto_initialize_;
  }
  changed_.notify_all();
  Json frame = Json::parse(line, nullptr, false);
  if (auto_initialize && proto::frame_type(frame) == "initialize") {
    push_frame(Json{{"type", "initialized"}, {"id", frame["id"]}});
  } else if (responder) {
    responder(frame, *this);
  }
  return {};
}

Result<std::optional<std::string>> FakeTransport::read_line() {
  std::unique_lock lock(mutex_);
  auto ready = [&] {
    return !script_.empty() || killed_ || closed_ || when_empty_ == WhenEmpty::kEndOfStream;
  };
  if (!ready()) {
    ++blocked_readers_;
    changed_.notify_all();
    changed_.wait(lock, ready);
    --blocked_readers_;
  }
  if (script_.empty()) {
    end_of_stream_returned_ = true;
    return std::optional<std::string>();
  }
  Item item = std::move(script_.front());
  script_.pop_front();
  if (auto* line = std::get_if<std::string>(&item)) {
    static const std::string kPlaceholder = "\"<current-cell>\"";
    if (auto at = line->find(kPlaceholder); at != std::string::npos) {
      line->replace(at, kPlaceholder.size(), Json(last_execute_id_locked()).dump());
    }
    return std::optional<std::string>(*line);
  }
  if (auto* error = std::get_if<Error>(&item)) return *error;
  end_of_stream_returned_ = true;
  return std::optional<std::string>();
}

bool FakeTransport::alive() {
  std::lock_guard lock(mutex_);
  if (end_of_stream_returned_) {
    if (exit_lag_ == 0) return false;
    --exit_lag_;
  }
  return alive_ && !killed_ && !closed_;
}

bool FakeTransport::interrupt() {
  std::lock_guard lock(mutex_);
  return interrupt_result_;
}

void FakeTransport::kill() {
  {
    std::lock_guard lock(mutex_);
    ++kill_calls_;
    killed_ = true;
  }
  changed_.notify_all();
}

Status FakeTransport::close(bool graceful) {
  {
    std::lock_guard lock(mutex_);
    ++close_calls_;
    last_close_graceful_ = graceful;
    closed_ = true;
  }
  changed_.notify_all();
  return {};
}

std::optional<kernel::StderrSnapshot> FakeTransport::stderr_snapshot() {
  std::lock_guard lock(mutex_);
  return stderr_;
}

std::optional<int> FakeTransport::exit_status() {
  std::lock_guard lock(mutex_);
  return exit_status_;
}

Result<std::shared_ptr<kernel::Transport>> FakeTransportFactory::make() {
  ++calls_;
  if (error_) return *error_;
  return transport_;
}

}  // namespace o4s::testing
