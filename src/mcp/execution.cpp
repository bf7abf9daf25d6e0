#include "mcp/execution.h"

#include "base/random_id.h"
#include "jupyter/error_parts.h"
#include "mcp/base64.h"
#include "proto/frame_types.h"

namespace o4s::mcp {

namespace {

// Live output kept while a cell runs (what get_execution shows so far);
// the manager bounds what the final response holds.
constexpr std::size_t kLiveOutputBytes = 8u << 20;
// Displays kept per cell: the images go to the client, the rest is named.
constexpr std::size_t kDisplaysKept = 64;
constexpr std::size_t kImagesKept = 8;
// Base64 with line breaks decodes a little smaller than it counts: the
// result's exact 1 MB check is made on what is kept.
constexpr std::size_t kImageBytesKept = (1u << 20) + (64u << 10);

// What a display keeps: its mime types, the start of its text, and an
// image only while it fits the result's bound (8 of at most 1 MB); an image
// over it is marked dropped. A cell's 20 MB bundles are never held.
Json slim_display(const Json& data, std::size_t& images_kept) {
  Json slim = Json::object();
  for (const auto& [mime, value] : data.items()) {
    if (mime == "text/plain") {
      slim[mime] = text_of(value).substr(0, 200);
    } else if (mime == "image/png" || mime == "image/jpeg") {
      std::string encoded = text_of(value);
      if (images_kept < kImagesKept && base64_decoded_size(encoded) <= kImageBytesKept) {
        ++images_kept;
        slim[mime] = std::move(encoded);
      } else {
        slim[mime] = Json{{"dropped", true}};
      }
    } else {
      slim[mime] = nullptr;
    }
  }
  return slim;
}

Json error_object(const std::string& text, bool interrupted) {
  jupyter::ErrorParts parts = jupyter::split_error(text, interrupted);
  return Json{{"ename", parts.ename}, {"evalue", parts.evalue}, {"traceback", parts.traceback}};
}

}  // namespace

Execution::Execution(std::string id, std::string kernel_id, int execution_count)
    : id_(std::move(id)), kernel_id_(std::move(kernel_id)), execution_count_(execution_count) {
  outcome_.id = id_;
  outcome_.kernel_id = kernel_id_;
  outcome_.execution_count = execution_count_;
  outcome_.status = "running";
  outcome_.error = nullptr;
}

Status Execution::deliver(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (live_stdout_.size() + text.size() <= kLiveOutputBytes) {
    live_stdout_ += text;
  } else {
    live_dropped_ += text.size();
  }
  return {};
}

Status Execution::deliver(const Json& bundle) {
  std::lock_guard lock(mutex_);
  if (bundle.value("type", "") == proto::frame::kClearOutput) return {};
  auto data = bundle.find("data");
  if (data == bundle.end() || !data->is_object()) return {};
  if (bundle.value("execute_result", false)) {
    outcome_.result = text_of(data->value("text/plain", Json()));
    return {};
  }
  if (outcome_.displays.size() < kDisplaysKept) {
    outcome_.displays.push_back(slim_display(*data, images_kept_));
  }
  return {};
}

kernel::InputAnswer Execution::ask(const std::string&, bool) {
  kernel::InputAnswer answer;
  answer.error = "input() has no channel through the MCP server: put the value in the code instead";
  return answer;
}

void Execution::finish(const Result<Json>& response) {
  std::lock_guard lock(mutex_);
  finished_ = true;
  ExecutionSnapshot& out = outcome_;
  if (!response) {
    out.stdout_text = live_stdout_;
    out.status = "error";
    std::string message = response.error().message +
                          " (the kernel's worker is gone: call restart_kernel for a fresh one)";
    out.error = Json{{"ename", "KernelWorkerDied"}, {"evalue", message}, {"traceback", {message}}};
  } else {
    const Json& r = response.value();
    out.stdout_text = r.value("stdout", live_stdout_);
    out.stderr_text = r.value("stderr", "");
    if (auto files = r.find("files_read"); files != r.end() && files->is_array()) {
      out.files_read = *files;
    }
    if (auto usage = r.find("usage"); usage != r.end() && usage->is_object()) {
      out.usage = Json{{"wall_s", usage->value("wall_s", 0.0)},
                       {"cpu_s", usage->value("cpu_s", 0.0)},
                       {"peak_rss_bytes", usage->value("peak_rss_kb", 0LL) * 1024}};
    }
    bool interrupted = r.value("interrupted", false);
    auto error = r.find("error");
    if (error != r.end() && error->is_string()) {
      out.error = error_object(error->get<std::string>(), interrupted);
      out.status = interrupted ? "interrupted" : "error";
    } else {
      out.status = interrupted ? "interrupted" : "ok";
    }
  }
  if (out.status != "ok" && stop_ == StopReason::kTimeout) out.status = "timeout";
  if (out.status == "error" && stop_ == StopReason::kInterrupted) out.status = "interrupted";
  // The response holds the output now; the live copy is not kept twice.
  live_stdout_.clear();
  live_stdout_.shrink_to_fit();
  if (out.usage.empty()) {
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    out.usage = Json{{"wall_s", wall}, {"cpu_s", 0.0}, {"peak_rss_bytes", 0}};
  }
  done_.notify_all();
}

void Execution::mark_stop(StopReason reason) {
  std::lock_guard lock(mutex_);
  if (!finished_ && stop_ == StopReason::kNone) stop_ = reason;
}

void Execution::add_artifact(Json artifact) {
  std::lock_guard lock(mutex_);
  if (outcome_.artifacts.size() < kDisplaysKept) outcome_.artifacts.push_back(std::move(artifact));
}

bool Execution::wait_for(std::chrono::milliseconds timeout, bool or_question) {
  std::unique_lock lock(mutex_);
  return done_.wait_for(lock, timeout,
                        [&] { return finished_ || (or_question && question_ && !answer_); });
}

std::optional<Json> Execution::ask_question(Json request, std::chrono::seconds timeout,
                                            const std::function<bool()>& give_up) {
  std::unique_lock lock(mutex_);
  question_ = Question{random_hex(16), std::move(request)};
  answer_.reset();
  done_.notify_all();  // the call waiting on this execution hands it out
  auto until = std::chrono::steady_clock::now() + timeout;
  while (!answer_ && std::chrono::steady_clock::now() < until) {
    done_.wait_for(lock, std::chrono::milliseconds(250), [this] { return answer_.has_value(); });
    if (answer_ || !give_up) continue;
    lock.unlock();
    bool stop = give_up();
    lock.lock();
    if (stop) break;
  }
  std::optional<Json> answer = std::move(answer_);
  question_.reset();
  answer_.reset();
  return answer;
}

std::optional<Execution::Question> Execution::question() {
  std::lock_guard lock(mutex_);
  if (answer_) return std::nullopt;
  return question_;
}

bool Execution::answer_question(const std::string& state, Json answer) {
  std::lock_guard lock(mutex_);
  if (!question_ || answer_ || state.size() != question_->state.size()) return false;
  // Compared without an early exit: the time says nothing of the token.
  unsigned char diff = 0;
  for (std::size_t i = 0; i < state.size(); ++i) {
    diff |= static_cast<unsigned char>(state[i] ^ question_->state[i]);
  }
  if (diff != 0) return false;
  answer_ = std::move(answer);
  done_.notify_all();
  return true;
}

bool Execution::finished() {
  std::lock_guard lock(mutex_);
  return finished_;
}

std::string Execution::last_line() {
  std::lock_guard lock(mutex_);
  std::string_view text = live_stdout_;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  std::size_t start = text.rfind('\n');
  std::string_view line = start == std::string_view::npos ? text : text.substr(start + 1);
  return std::string(line.substr(0, 200));
}

ExecutionSnapshot Execution::snapshot() {
  std::lock_guard lock(mutex_);
  ExecutionSnapshot copy = outcome_;
  if (!finished_) {
    copy.stdout_text = live_stdout_;
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    copy.usage = Json{{"wall_s", wall}, {"cpu_s", 0.0}, {"peak_rss_bytes", 0}};
  }
  return copy;
}

bool Execution::stop_requested() {
  std::lock_guard lock(mutex_);
  return stop_ != StopReason::kNone;
}

std::string text_of(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string joined;
    for (const auto& part : value) {
      if (part.is_string()) joined += part.get<std::string>();
    }
    return joined;
  }
  return {};
}

}  // namespace o4s::mcp
