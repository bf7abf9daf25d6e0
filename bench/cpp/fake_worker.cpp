#include "fake_worker.h"

#include <charconv>

#include "proto/frame_codec.h"

namespace o4s::bench {

using kernel::Json;

FakeWorkerTransport::FakeWorkerTransport()
    : host_call_line_(proto::encode_frame(Json{
          {"type", "host_call"}, {"id", "hc-0-1"}, {"method", "ping"}, {"args", Json::array()}})),
      response_line_(proto::encode_frame(Json{{"type", "response"},
                                              {"id", "cell"},
                                              {"stdout", ""},
                                              {"stderr", ""},
                                              {"error", nullptr},
                                              {"interrupted", false}})) {}

void FakeWorkerTransport::emit_next_locked() {
  if (calls_left_ > 0) {
    --calls_left_;
    outbox_.push_back(host_call_line_);
  } else {
    outbox_.push_back(response_line_);
  }
}

Status FakeWorkerTransport::write_line(std::string_view line) {
  std::lock_guard lock(mutex_);
  if (closed_) return make_error(ErrorCode::kNotAlive, "fake worker closed");
  // The hot path: a host_response needs no parsing to be answered.
  if (line.find("\"host_response\"") != std::string_view::npos) {
    emit_next_locked();
    return {};
  }
  auto frame = proto::decode_frame(line);
  if (!frame) return std::move(frame).error();
  std::string_view type = proto::frame_type(*frame);
  if (type == "initialize") {
    outbox_.push_back(proto::encode_frame(
        Json{{"type", "initialized"}, {"id", proto::frame_string(*frame, "id")}}));
  } else if (type == "execute") {
    std::string code = proto::frame_string(*frame, "code");
    calls_left_ = 0;
    std::from_chars(code.data(), code.data() + code.size(), calls_left_);
    emit_next_locked();
  } else if (type == "shutdown") {
    closed_ = true;
  }
  return {};
}

Result<std::optional<std::string>> FakeWorkerTransport::read_line() {
  std::lock_guard lock(mutex_);
  // Single-threaded by construction: every read follows the write that
  // queued its answer, so an empty outbox means the worker has gone.
  if (outbox_.empty()) return std::optional<std::string>();
  std::string line = std::move(outbox_.front());
  outbox_.pop_front();
  return std::optional<std::string>(std::move(line));
}

bool FakeWorkerTransport::alive() {
  std::lock_guard lock(mutex_);
  return !closed_;
}

void FakeWorkerTransport::kill() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  outbox_.clear();
}

Status FakeWorkerTransport::close(bool) {
  kill();
  return {};
}

Result<std::shared_ptr<kernel::Transport>> FakeWorkerFactory::make() {
  return std::shared_ptr<kernel::Transport>(std::make_shared<FakeWorkerTransport>());
}

kernel::DispatchOutcome PongHooks::dispatch(const std::string&, const Json&,
                                            const kernel::DispatchContext&) {
  return Json("pong");
}

Result<std::optional<Json>> PongHooks::readline_override() {
  return make_error(ErrorCode::kUnsupported, "no readline override");
}

Status PongHooks::send_override(const Json&) {
  return make_error(ErrorCode::kUnsupported, "no send override");
}

Status PongHooks::service_host_call_override(const Json&) {
  return make_error(ErrorCode::kUnsupported, "no service_host_call override");
}

}  // namespace o4s::bench
