// Frames a cell sends besides stdout and host calls (contracts.md): display,
// clear_output and input_request. They are routed by cell id like stdout
// chunks, and an input_request always gets an answer: a worker blocked in
// input() would otherwise wait for a reply that never comes.
#include "kernel/kernel_manager.h"

namespace o4s::kernel {

namespace {

constexpr const char* kNoInputChannel =
    "no input channel: this kernel's caller cannot answer input()";

}  // namespace

Status KernelManager::deliver_cell_frame(const Json& frame, const std::string& cell_id,
                                         CellFrameSink* on_frames) {
  const bool wants_answer = proto::frame_type(frame) == "input_request";
  if (proto::frame_string(frame, "id") != cell_id) {
    // A thread the previous cell left running: not this cell's output, and
    // not a question this caller was asked. Answer it anyway (by its own
    // id) so that thread is not stuck, but with an error.
    if (wants_answer) {
      return send(Json{{"type", "input_reply"},
                       {"id", proto::frame_string(frame, "id")},
                       {"error", kNoInputChannel}});
    }
    return {};
  }
  std::optional<Json> reply;
  if (on_frames != nullptr) reply = on_frames->on_frame(frame);
  if (!wants_answer) return {};
  if (!reply) reply = Json{{"type", "input_reply"}, {"id", cell_id}, {"error", kNoInputChannel}};
  return send(*reply);
}

}  // namespace o4s::kernel
