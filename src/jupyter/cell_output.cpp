#include "jupyter/cell_output.h"

#include <xeus/xinput.hpp>

#include "host/approval_text.h"
#include "proto/frame_types.h"

namespace o4s::jupyter {

namespace {

nl::json object_or_empty(const nl::json& frame, const char* key) {
  auto it = frame.find(key);
  return it != frame.end() && it->is_object() ? *it : nl::json::object();
}

}  // namespace

CellOutput::CellOutput(xeus::xinterpreter& interpreter, StreamCoalescer& stdout_stream,
                       int execution_count, bool silent, bool allow_stdin)
    : interpreter_(interpreter),
      stdout_stream_(stdout_stream),
      execution_count_(execution_count),
      silent_(silent),
      allow_stdin_(allow_stdin) {}

CellOutput::~CellOutput() { stdout_stream_.flush(); }

Status CellOutput::deliver(const std::string& text) {
  streamed_stdout_ = true;
  if (!silent_) stdout_stream_.add(text);
  return {};
}

Status CellOutput::deliver(const nl::json& bundle) {
  if (silent_) return {};
  stdout_stream_.in_order([&] {
    if (bundle.value("type", "") == proto::frame::kClearOutput) {
      interpreter_.clear_output(bundle.value("wait", false));
    } else {
      display(bundle);
    }
  });
  return {};
}

kernel::InputAnswer CellOutput::ask(const std::string& prompt, bool password) {
  kernel::InputAnswer answer;
  if (!allow_stdin_) {
    answer.error = "no input channel: this client does not allow stdin (allow_stdin is false)";
    return answer;
  }
  // What the cell printed before asking is shown before the prompt.
  stdout_stream_.flush();
  // A cell's prompt never passes for the host's approval question.
  const std::string shown =
      prompt.starts_with(host::kApprovalPromptPrefix) ? "input: " + prompt : prompt;
  answer.value = xeus::blocking_input_request(shown, password);
  if (answer.value == host::kNoInputReply) {
    answer.value.reset();
    answer.error =
        "no input channel: this client cannot answer input() (a kernel on Slurm over MCP)";
  }
  return answer;
}

void CellOutput::display(const nl::json& frame) {
  nl::json data = object_or_empty(frame, "data");
  if (data.empty()) return;
  nl::json metadata = object_or_empty(frame, "metadata");
  // The cell's last value is marked so (the displayhook's frame); every
  // other bundle is a display() call.
  if (frame.value("execute_result", false)) {
    result_ = nl::json{{"data", std::move(data)}, {"metadata", std::move(metadata)}};
    return;
  }
  nl::json transient = nl::json::object();
  auto display_id = frame.find("display_id");
  if (display_id != frame.end() && display_id->is_string()) transient["display_id"] = *display_id;
  if (frame.value("update", false) && transient.contains("display_id")) {
    interpreter_.update_display_data(std::move(data), std::move(metadata), std::move(transient));
  } else {
    interpreter_.display_data(std::move(data), std::move(metadata), std::move(transient));
  }
}

void CellOutput::finish(const nl::json& response) {
  if (silent_) return;
  if (!streamed_stdout_) stdout_stream_.add(response.value("stdout", ""));
  stdout_stream_.in_order([&] {
    std::string err = response.value("stderr", "");
    if (!err.empty()) interpreter_.publish_stream("stderr", err);
    if (result_) {
      interpreter_.publish_execution_result(execution_count_, (*result_)["data"],
                                            (*result_)["metadata"]);
    }
  });
}

}  // namespace o4s::jupyter
