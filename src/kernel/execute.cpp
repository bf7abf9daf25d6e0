// The execute transaction: one request, the host loop of spec §3.6, one
// finalised response (§3.8).
#include <chrono>
#include <thread>

#include "base/random_id.h"
#include "base/scope_exit.h"
#include "base/utf8.h"
#include "kernel/cell_wait.h"
#include "kernel/idle_waits.h"
#include "kernel/kernel_manager.h"
#include "kernel/oom_report.h"
#include "kernel/output_bounds.h"
#include "kernel/streamed_stdout.h"
#include "proto/frame_types.h"

namespace o4s::kernel {

namespace {

std::string tail_suffix(const StderrSnapshot& tail) {
  if (tail.dropped == 0) return {};
  return " (stderr tail: " + std::to_string(tail.retained) + " of " + std::to_string(tail.seen) +
         " bytes kept, " + std::to_string(tail.dropped) + " dropped)";
}

// The tail is raw bytes; replace what is not UTF-8 so the message is text.
std::string valid_utf8(const std::string& bytes) {
  return Json::parse(Json(bytes).dump(-1, ' ', false, Json::error_handler_t::replace))
      .get<std::string>();
}

}  // namespace

Error KernelManager::worker_died_error() {
  std::string message = "kernel worker exited unexpectedly";
  if (auto t = transport()) {
    // The supervisor drains stderr asynchronously; give it a moment to see
    // the last words of a dying worker. A dying process closes its pipes
    // before it is reported as exited, so also wait for that: after this
    // error is_alive() must not still say true.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    std::optional<StderrSnapshot> tail = t->stderr_snapshot();
    while (((tail && !tail->closed) || t->alive()) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      tail = t->stderr_snapshot();
    }
    if (tail && !tail->text.empty()) {
      std::string last_words = valid_utf8(tail->text);
      // Also kept with the worker's log: a crash report (faulthandler, a
      // fatal error) stays readable after the caller dropped the exception.
      remember_log("worker exited; its stderr ended with: " +
                   std::string(utf8::suffix_within_bytes(last_words, 1500)));
      message += ": " + last_words + tail_suffix(*tail);
    } else if (auto code = t->exit_status()) {
      // Nothing on stderr (a SIGKILL, an OOM kill): say how it ended instead.
      message += *code < 0 ? " (killed by signal " + std::to_string(-*code) + ")"
                           : " (exit status " + std::to_string(*code) + ")";
    }
  }
  // A limit of the sandbox's envelope (memory, CPU time) ends the worker
  // from outside; say which one.
  if (options_.sandbox) {
    if (auto hit = options_.sandbox->limit_hit()) message += "; " + *hit;
  }
  return make_error(ErrorCode::kWorkerExited, std::move(message));
}

Status KernelManager::fill_streamed_stdout(Json& response, const std::vector<StreamedChunk>& chunks,
                                           const std::string& cell_id) {
  std::optional<StreamDeclaration> declared = take_stream_declaration(response);
  if (chunks.empty() && !declared) return {};
  auto it = response.find("stdout");
  bool empty = it == response.end() || it->is_null() ||
               (it->is_string() && it->get_ref<const std::string&>().empty());
  if (!empty) return {};
  if (!declared) {
    // An empty stdout with chunks means "what was streamed" (spec §3.8).
    response["stdout"] = concatenate_chunks(chunks);
    return {};
  }
  // The worker left stdout out because the chunks spell it; check that the
  // ones held are exactly that stream's, else ask for the text.
  if (auto rebuilt = rebuild_declared_stdout(chunks, *declared)) {
    response["stdout"] = std::move(*rebuilt);
    return {};
  }
  mismatched_streams_.fetch_add(1);
  auto asked = request_stdout(cell_id);
  if (!asked) {
    // Never hand back text that could not be checked: the caller gets the
    // failure (a dead worker reads as one) instead.
    remember_log("host could not recover a cell's stdout: " + asked.error().message);
    return std::move(asked).error();
  }
  response["stdout"] = std::move(asked.value());
  return {};
}

Result<Json> KernelManager::finalise_response(Json response,
                                              const std::vector<StreamedChunk>& chunks,
                                              const std::string& cell_id, bool sidecar_event) {
  if (Status filled = fill_streamed_stdout(response, chunks, cell_id); !filled) {
    return std::move(filled).error();
  }
  response.erase("skill_sidecar_loads");
  if (sidecar_event) {
    response["skill_sidecar_loads"] =
        Json::array({Json{{"event", "untrusted_worker_sidecar_event"}}});
  }
  // Whatever the worker sent, the caller gets the documented bounds (a cell
  // can write a response frame under its own id onto the protocol pipe).
  if (bound_response_fields(response)) remember_log("host cut an oversized response field");
  if (!response.contains("cwd")) {
    // Host-side annotation: where an oversized stdout may be spilled.
    response["cwd"] = options_.cwd ? *options_.cwd : std::string("None");
  }
  return response;
}

Json KernelManager::execute_request(const std::string& code, const std::string& origin,
                                    const std::string& cell_id,
                                    const std::string& cell_name) const {
  Json request{
      {"type", proto::frame::kExecute}, {"id", cell_id}, {"code", code}, {"origin", origin}};
  if (options_.last_value_as_result) request["last_value"] = "result";
  if (!cell_name.empty()) request["cell_name"] = cell_name;
  return request;
}

Result<std::unique_ptr<CellCapture>> KernelManager::open_cell_capture(Json& request) {
  if (!options_.capture_sinks) return std::unique_ptr<CellCapture>();
  // The read ends are open (and drained) before the frame goes out, so the
  // worker's blocking opens for writing find their reader.
  auto sinks = sink_directory();
  if (!sinks) return std::move(sinks).error();
  auto opened = CellCapture::open(*sinks.value());
  if (!opened) return opened;
  request["sink_out"] = opened.value()->out_path();
  request["sink_err"] = opened.value()->err_path();
  return opened;
}

Result<Json> KernelManager::execute(const std::string& code, const std::string& origin,
                                    const std::optional<std::string>& cell_id_arg,
                                    ChunkSink* on_chunk, DisplaySink* on_display,
                                    InputSource* on_input, const std::string& cell_name) {
  const CellInterrupts::Entered entered(cell_interrupts_);
  std::lock_guard transaction(transaction_);
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");
  const std::string cell_id = cell_id_arg && !cell_id_arg->empty() ? *cell_id_arg : uuid4();
  Json request = execute_request(code, origin, cell_id, cell_name);
  const CellInterrupts::Begun begun = cell_interrupts_.begin();
  const ScopeExit ended([this] { cell_interrupts_.end(); });
  request["seq"] = begun.seq;
  // Interrupted before it was sent: the worker reads that first.
  if (begun.interrupted_already) send_interrupt_frame(begun.seq);
  if (on_chunk != nullptr && on_chunk->bounds_itself()) request["stream"] = "all";
  auto capture = open_cell_capture(request);
  if (!capture) return std::move(capture).error();

  CellWait cell(cell_id, CellCallers{on_chunk, on_display, on_input}, std::move(capture.value()),
                [this](const std::string& message) { remember_log(message); });
  cell.watch_sink_output(transport());
  const OomWatch oom_watch(options_.sandbox.get());
  Result<Json> answer = send_and_await(request, cell);
  if (!answer) return answer;
  return finish_cell(cell, std::move(answer.value()), oom_watch);
}

Result<Json> KernelManager::finish_cell(CellWait& cell, Json frame, const OomWatch& oom_watch) {
  const ChunkKeeper& kept = cell.kept_chunks();
  if (kept.dropped_chunks() > 0) {
    dropped_stdout_chunks_.fetch_add(kept.dropped_chunks());
    remember_log("host dropped " + std::to_string(kept.dropped_chunks()) + " stdout chunks (" +
                 std::to_string(kept.dropped_bytes()) + " bytes) past the per-cell bound");
  }
  std::shared_ptr<Transport> reader = transport();
  cell.finish_capture(frame, reader ? reader->log_target() : nullptr);
  Result<Json> response =
      finalise_response(std::move(frame), kept.chunks(), cell.cell_id(), cell.sidecar_event());
  if (cell.chunk_error()) return std::move(*cell.chunk_error());
  if (!response) return response;
  oom_watch.report(response.value());
  cell.add_displays(response.value());
  return response;
}

Result<std::string> KernelManager::request_stdout(const std::string& cell_id) {
  ArmedReply bound = arm_reply_bound();
  StdoutResendWait wait(&bound, cell_id);
  Result<Json> text =
      send_and_await(Json{{"type", proto::frame::kStdoutRequest}, {"id", cell_id}}, wait);
  if (!text) return std::move(text).error();
  return text.value().get<std::string>();
}

}  // namespace o4s::kernel
