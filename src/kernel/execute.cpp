// The execute transaction: one request, the host loop of spec §3.6, one
// finalised response (§3.8).
#include <chrono>
#include <thread>

#include "base/random_id.h"
#include "base/scope_exit.h"
#include "base/utf8.h"
#include "kernel/cell_io.h"
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

Result<Json> KernelManager::finalise_response(Json response,
                                              const std::vector<StreamedChunk>& chunks,
                                              const std::string& cell_id, bool sidecar_event) {
  std::optional<StreamDeclaration> declared = take_stream_declaration(response);
  if (!chunks.empty() || declared) {
    auto it = response.find("stdout");
    bool empty = it == response.end() || it->is_null() ||
                 (it->is_string() && it->get_ref<const std::string&>().empty());
    if (empty && declared) {
      // The worker left stdout out because the chunks spell it; check that
      // the ones held are exactly that stream's, else ask for the text.
      if (auto rebuilt = rebuild_declared_stdout(chunks, *declared)) {
        response["stdout"] = std::move(*rebuilt);
      } else {
        mismatched_streams_.fetch_add(1);
        auto asked = request_stdout(cell_id);
        if (!asked) {
          // Never hand back text that could not be checked: the caller gets
          // the failure (a dead worker reads as one) instead.
          remember_log("host could not recover a cell's stdout: " + asked.error().message);
          return std::move(asked).error();
        }
        response["stdout"] = std::move(asked.value());
      }
    } else if (empty) {
      // An empty stdout with chunks means "what was streamed" (spec §3.8).
      response["stdout"] = concatenate_chunks(chunks);
    }
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

Result<Json> KernelManager::execute(const std::string& code, const std::string& origin,
                                    const std::optional<std::string>& cell_id_arg,
                                    ChunkSink* on_chunk, DisplaySink* on_display,
                                    InputSource* on_input, const std::string& cell_name) {
  std::lock_guard transaction(transaction_);
  if (!is_alive()) return make_error(ErrorCode::kNotAlive, "kernel worker is not alive");
  const std::string cell_id = cell_id_arg && !cell_id_arg->empty() ? *cell_id_arg : uuid4();

  Json request{
      {"type", proto::frame::kExecute}, {"id", cell_id}, {"code", code}, {"origin", origin}};
  if (options_.last_value_as_result) request["last_value"] = "result";
  if (!cell_name.empty()) request["cell_name"] = cell_name;
  std::unique_ptr<CellCapture> capture;
  if (options_.capture_sinks) {
    // The read ends are open (and drained) before the frame goes out, so
    // the worker's blocking opens for writing find their reader.
    auto sinks = sink_directory();
    if (!sinks) return std::move(sinks).error();
    auto opened = CellCapture::open(*sinks.value());
    if (!opened) return std::move(opened).error();
    capture = std::move(opened.value());
    request["sink_out"] = capture->out_path();
    request["sink_err"] = capture->err_path();
  }

  ChunkKeeper kept_chunks;
  LiveBudget live_budget;
  bool sidecar_event = false;
  std::optional<Error> chunk_error;
  DisplayCollector displays;
  bool input_flooded = false;
  auto deliver_live = [&](const std::string& text) {
    // The live budget bounds what a hostile worker can make the caller hold.
    if (text.empty() || on_chunk == nullptr || chunk_error || !live_budget.admit(text.size())) {
      return;
    }
    Status delivered = on_chunk->deliver(text);
    if (!delivered) chunk_error = std::move(delivered).error();
  };
  std::shared_ptr<Transport> reader = transport();
  if (capture && on_chunk != nullptr && reader) {
    // Sink output is passed on by this thread while it waits for frames.
    reader->set_wake(capture->wake_fd(), [&] { deliver_live(capture->take_live_stdout()); });
  }
  ScopeExit clear_wake([&] {
    if (capture && reader) reader->set_wake(-1, nullptr);
  });

  const OomWatch oom_watch(options_.sandbox.get());
  Status sent = send(request);
  if (!sent) return std::move(sent).error();

  for (;;) {
    auto next = next_object_frame();
    if (!next) {
      Error error = std::move(next).error();
      if (capture && error.code == ErrorCode::kWorkerExited) {
        // A crashed R reports its last words (the segfault banner) on the
        // message sink, not on the stderr the tail holds.
        std::string said = capture->finish(std::chrono::milliseconds(200)).stderr_text;
        // Its head says what happened (R's "caught segfault" banner), its
        // tail how it ended; the middle is a traceback of the worker.
        if (said.size() > 1000)
          said = said.substr(0, 600) + "\n...\n" + said.substr(said.size() - 300);
        if (!said.empty()) error.message += " (the cell's stderr ended with: " + said + ")";
      }
      return error;
    }
    Json& frame = next.value();
    std::string_view type = proto::frame_type(frame);
    if (type == proto::frame::kResponse) {
      if (proto::frame_string(frame, "id") != cell_id) {
        // Not this cell's answer: a cell that wrote a forged response onto
        // the protocol pipe must not shift every later result by one cell.
        stale_responses_.fetch_add(1);
        remember_log("host dropped a response frame for another cell");
        continue;
      }
      if (kept_chunks.dropped_chunks() > 0) {
        dropped_stdout_chunks_.fetch_add(kept_chunks.dropped_chunks());
        remember_log("host dropped " + std::to_string(kept_chunks.dropped_chunks()) +
                     " stdout chunks (" + std::to_string(kept_chunks.dropped_bytes()) +
                     " bytes) past the per-cell bound");
      }
      if (capture) {
        CellCapture::Finished finished = capture->finish(kSinkFinishGrace);
        deliver_live(finished.live_tail);
        auto flag = frame.find("sink_capture");
        if (flag != frame.end() && flag->is_boolean() && flag->get<bool>()) {
          apply_sink_capture(frame, std::move(finished));
        }
      }
      Result<Json> response =
          finalise_response(std::move(frame), kept_chunks.chunks(), cell_id, sidecar_event);
      if (chunk_error) return std::move(*chunk_error);
      if (response) oom_watch.report(response.value());
      // Only when the cell displayed something: a plain cell's response
      // keeps its exact key set.
      if (response && displays.truncated()) {
        response.value()["displays_truncated"] = true;
        response.value()["displays_dropped"] = displays.dropped();
      }
      if (response && !displays.empty()) response.value()["displays"] = displays.take();
      return response;
    }
    if (type == proto::frame::kHostCall) {
      Status serviced = service_host_call(frame);
      if (!serviced) return std::move(serviced).error();
    } else if (type == proto::frame::kStdoutChunk) {
      auto id = frame.find("id");
      if (id == frame.end() || !id->is_string() || id->get_ref<const std::string&>() != cell_id) {
        // A logging handler bound to a finished cell's stdout, or a thread
        // writing after its cell returned: not this cell's output.
        stale_stdout_chunks_.fetch_add(1);
        continue;
      }
      std::string text = proto::frame_string(frame, "text");
      if (text.empty()) continue;
      deliver_live(text);
      StreamedChunk kept{std::move(text), std::nullopt, std::nullopt};
      if (auto stream = frame.find("stream");
          stream != frame.end() && stream->is_number_integer()) {
        kept.stream = stream->get<std::int64_t>();
      }
      if (auto seq = frame.find("seq"); seq != frame.end() && seq->is_number_integer()) {
        kept.seq = seq->get<std::int64_t>();
      }
      kept_chunks.keep(std::move(kept));
    } else if (type == proto::frame::kDisplay || type == proto::frame::kClearOutput) {
      if (proto::frame_string(frame, "id") != cell_id) {
        stale_displays_.fetch_add(1);
        continue;
      }
      std::optional<Json> bundle = display_bundle(frame);
      if (!bundle) {
        remember_log("host dropped a malformed display frame");
        continue;
      }
      if (on_display != nullptr && !chunk_error) {
        Status delivered = on_display->deliver(*bundle);
        if (!delivered) chunk_error = std::move(delivered).error();
      }
      displays.keep(std::move(*bundle));
    } else if (type == proto::frame::kInputRequest) {
      if (input_flooded) continue;
      // A worker that sends requests without reading the replies would fill
      // the pipe and block this thread in write(): stop answering instead.
      auto t = transport();
      auto unread = t ? t->unread_input_bytes() : std::nullopt;
      if (unread && *unread > kInputBacklogBytes) {
        input_flooded = true;
        remember_log("host stopped answering input requests: the worker does not read replies");
        continue;
      }
      bool running = proto::frame_string(frame, "id") == cell_id;
      Status replied = send(input_reply(frame, running ? on_input : nullptr, running));
      if (!replied) return std::move(replied).error();
    } else if (type == proto::frame::kSkillSidecarLoad) {
      sidecar_event = true;
    } else if (type == proto::frame::kLog) {
      std::string msg = proto::frame_string(frame, "msg");
      if (!msg.empty()) remember_log(msg);
    }
  }
}

void KernelManager::apply_sink_capture(Json& response, CellCapture::Finished finished) {
  response["stdout"] = std::move(finished.stdout_text);
  response["stderr"] = std::move(finished.stderr_text);
  auto usage = response.find("usage");
  if (usage == response.end() || !usage->is_object()) {
    response["usage"] = std::move(finished.usage);
    return;
  }
  for (auto& [key, value] : finished.usage.items()) (*usage)[key] = value;
}

Result<Json> KernelManager::next_object_frame() {
  for (;;) {
    auto next = readline();
    if (!next) return std::move(next).error();
    if (!next->has_value()) return worker_died_error();
    if (next->value().is_object()) return std::move(next->value());
  }
}

Result<std::string> KernelManager::request_stdout(const std::string& cell_id) {
  const std::string what = "stdout resend";
  ArmedReply bound = arm_reply_bound();
  Status sent = send(Json{{"type", proto::frame::kStdoutRequest}, {"id", cell_id}});
  if (!sent) return bound.finish() ? unanswered_error(what) : std::move(sent).error();
  for (;;) {
    auto next = next_object_frame();
    if (!next) return bound.finish() ? unanswered_error(what) : std::move(next).error();
    Json& frame = next.value();
    std::string_view type = proto::frame_type(frame);
    if (type == proto::frame::kStdoutText && proto::frame_string(frame, "id") == cell_id) {
      if (bound.finish()) return unanswered_error(what);
      auto text = frame.find("text");
      if (frame.contains("error") || text == frame.end() || !text->is_string()) {
        return make_error(ErrorCode::kProtocol, "worker kept no stdout for the cell");
      }
      return text->get<std::string>();
    }
    if (type == proto::frame::kHostCall) {
      // A thread the cell left running may call the host meanwhile.
      if (bound.pause()) return unanswered_error(what);
      Status serviced = service_host_call(frame);
      if (!serviced) return std::move(serviced).error();
      bound.rearm();
    } else if (type == proto::frame::kStdoutChunk) {
      stale_stdout_chunks_.fetch_add(1);
    } else if (type == proto::frame::kLog) {
      std::string msg = proto::frame_string(frame, "msg");
      if (!msg.empty()) remember_log(msg);
    }
  }
}

}  // namespace o4s::kernel
