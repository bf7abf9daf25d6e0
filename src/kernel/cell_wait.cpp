#include "kernel/cell_wait.h"

#include <chrono>

namespace o4s::kernel {

namespace {

// The response's fields replaced by what the host drained from the sinks.
void apply_sink_capture(Json& response, CellCapture::Finished finished) {
  response["stdout"] = std::move(finished.stdout_text);
  response["stderr"] = std::move(finished.stderr_text);
  auto usage = response.find("usage");
  if (usage == response.end() || !usage->is_object()) {
    response["usage"] = std::move(finished.usage);
    return;
  }
  for (auto& [key, value] : finished.usage.items()) (*usage)[key] = value;
}

// Whether the frame's `id` is `id` (compared in place: every frame of a
// cell passes here).
bool has_id(const Json& frame, const std::string& id) {
  auto it = frame.find("id");
  return it != frame.end() && it->is_string() && it->get_ref<const std::string&>() == id;
}

std::optional<std::int64_t> integer_field(const Json& frame, const char* key) {
  auto it = frame.find(key);
  if (it == frame.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

CellWait::CellWait(std::string cell_id, CellCallers callers, std::unique_ptr<CellCapture> capture,
                   Log log)
    : FrameWait("execute", nullptr),
      cell_id_(std::move(cell_id)),
      callers_(callers),
      capture_(std::move(capture)),
      log_(std::move(log)) {}

CellWait::~CellWait() {
  if (watched_) watched_->set_wake(-1, nullptr);
}

void CellWait::watch_sink_output(std::shared_ptr<Transport> reader) {
  if (!capture_ || callers_.on_chunk == nullptr || !reader) return;
  watched_ = std::move(reader);
  watched_->set_wake(capture_->wake_fd(), [this] { deliver_live(capture_->take_live_stdout()); });
}

Verdict CellWait::judge(FrameKind kind, const Json& frame) {
  const bool ours = frame.is_object() && has_id(frame, cell_id_);
  switch (kind) {
    case FrameKind::kReply:
      // Only a response is a cell's; other replies are not waited for now.
      if (proto::frame_type(frame) != proto::frame::kResponse) return Verdict::kConsumed;
      return ours ? Verdict::kAnswer : Verdict::kStale;
    case FrameKind::kStdoutChunk:
      if (!ours) return Verdict::kStale;
      keep_chunk(frame);
      return Verdict::kConsumed;
    case FrameKind::kDisplay:
      if (!ours) return Verdict::kStale;
      keep_display(frame);
      return Verdict::kConsumed;
    case FrameKind::kSidecar:
      sidecar_event_ = true;
      return Verdict::kConsumed;
    case FrameKind::kInputRequest:
    case FrameKind::kHostCall:
    case FrameKind::kLog:
      return Verdict::kStanding;
    case FrameKind::kUnknown:
      return Verdict::kConsumed;
  }
  return Verdict::kConsumed;
}

Error CellWait::at_end(Error error, bool end_of_stream) {
  (void)end_of_stream;
  if (!capture_ || error.code != ErrorCode::kWorkerExited) return error;
  // A crashed R reports its last words (the segfault banner) on the
  // message sink, not on the stderr the tail holds.
  std::string said = capture_->finish(std::chrono::milliseconds(200)).stderr_text;
  // Its head says what happened (R's "caught segfault" banner), its tail
  // how it ended; the middle is a traceback of the worker.
  if (said.size() > 1000) said = said.substr(0, 600) + "\n...\n" + said.substr(said.size() - 300);
  if (!said.empty()) error.message += " (the cell's stderr ended with: " + said + ")";
  return error;
}

bool CellWait::is_running_cell(const Json& input_request) const {
  return input_request.is_object() && has_id(input_request, cell_id_);
}

void CellWait::deliver_live(const std::string& text) {
  // The live budget bounds what a hostile worker can make the caller hold,
  // unless the caller bounds that itself.
  if (text.empty() || callers_.on_chunk == nullptr || chunk_error_) return;
  if (!callers_.on_chunk->bounds_itself() && !live_budget_.admit(text.size())) return;
  Status delivered = callers_.on_chunk->deliver(text);
  if (!delivered) chunk_error_ = std::move(delivered).error();
}

void CellWait::keep_chunk(const Json& frame) {
  std::string text = proto::frame_string(frame, "text");
  if (text.empty()) return;
  deliver_live(text);
  kept_chunks_.keep(
      StreamedChunk{std::move(text), integer_field(frame, "stream"), integer_field(frame, "seq")});
}

void CellWait::keep_display(const Json& frame) {
  std::optional<Json> bundle = display_bundle(frame);
  if (!bundle) {
    log_("host dropped a malformed display frame");
    return;
  }
  if (callers_.on_display != nullptr && !chunk_error_) {
    Status delivered = callers_.on_display->deliver(*bundle);
    if (!delivered) chunk_error_ = std::move(delivered).error();
  }
  displays_.keep(std::move(*bundle));
}

void CellWait::finish_capture(Json& response, std::shared_ptr<proc::DrainTarget> strays) {
  if (!capture_) return;
  CellCapture::Finished finished = capture_->finish(kSinkFinishGrace, std::move(strays));
  deliver_live(finished.live_tail);
  auto flag = response.find("sink_capture");
  if (flag != response.end() && flag->is_boolean() && flag->get<bool>()) {
    apply_sink_capture(response, std::move(finished));
  }
}

void CellWait::add_displays(Json& response) {
  // Only when the cell displayed something: a plain cell's response keeps
  // its exact key set.
  if (displays_.truncated()) {
    response["displays_truncated"] = true;
    response["displays_dropped"] = displays_.dropped();
  }
  if (!displays_.empty()) response["displays"] = displays_.take();
}

}  // namespace o4s::kernel
