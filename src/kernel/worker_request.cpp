// One request, one answer, with an idle worker (is_complete, complete,
// inspect). Workers that predate a request ignore it silently, so each
// request is followed by a fence whose answer every worker gives: a
// stdout_request for an id no cell ever has, answered by a stdout_text
// frame. Requests are handled in order, so the fence's answer arriving
// before the request's means the worker does not know the request.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "base/random_id.h"
#include "kernel/idle_waits.h"
#include "kernel/kernel_manager.h"
#include "proto/frame_types.h"

namespace o4s::kernel {

namespace {

std::string format_seconds(double seconds) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", seconds);
  return buffer;
}

}  // namespace

ArmedReply KernelManager::arm_reply_bound() {
  return ArmedReply(reply_watchdog_, transport(), options_.idle_reply_timeout_s);
}

Error KernelManager::unanswered_error(const std::string& what) {
  // The watchdog's kill has been sent; wait (bounded) until the worker is
  // seen gone, so the caller's is_alive() agrees with this error and a
  // front door restarts it.
  if (auto t = transport()) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (t->alive() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return make_error(ErrorCode::kUnresponsive,
                    "kernel worker did not answer the " + what + " request within " +
                        format_seconds(options_.idle_reply_timeout_s) +
                        "s; it was stopped as a worker that broke the protocol (its variables "
                        "are lost)");
}

Result<std::unique_lock<std::timed_mutex>> KernelManager::idle_transaction() {
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");
  std::unique_lock transaction(transaction_, std::try_to_lock);
  if (!transaction.owns_lock()) return make_error(ErrorCode::kBusy, "kernel worker is busy");
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");
  return transaction;
}

Result<std::optional<Json>> KernelManager::worker_request(Json request) {
  if (!request.is_object() || !request.contains("type") || !request["type"].is_string()) {
    return make_error(ErrorCode::kInvalidArgument, "worker request needs a string type");
  }
  auto transaction = idle_transaction();
  if (!transaction) return std::move(transaction).error();
  const std::string what = request["type"].get<std::string>();
  const std::string request_id = "request-" + uuid4();
  const std::string fence_id = "fence-" + uuid4();
  request["id"] = request_id;
  ArmedReply bound = arm_reply_bound();
  FencedWait wait(what, &bound, what + std::string(proto::frame::kReplySuffix), request_id,
                  fence_id);
  Status sent = send(request);
  if (!sent) return bound.finish() ? unanswered_error(what) : std::move(sent).error();
  Result<Json> answer =
      send_and_await(Json{{"type", proto::frame::kStdoutRequest}, {"id", fence_id}}, wait);
  if (!answer) return std::move(answer).error();
  if (answer.value().is_null()) return std::optional<Json>();
  return std::optional<Json>(std::move(answer.value()));
}

}  // namespace o4s::kernel
