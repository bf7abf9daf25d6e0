#include "jupyter/cell_output.h"

#include <xeus/xinput.hpp>

namespace o4s::jupyter {

namespace {

nl::json object_or_empty(const nl::json& frame, const char* key) {
  auto it = frame.find(key);
  return it != frame.end() && it->is_object() ? *it : nl::json::object();
}

}  // namespace

CellOutput::CellOutput(xeus::xinterpreter& interpreter, int execution_count, bool silent,
                       bool allow_stdin)
    : interpreter_(interpreter),
      execution_count_(execution_count),
      silent_(silent),
      allow_stdin_(allow_stdin) {}

Status CellOutput::deliver(const std::string& text) {
  streamed_stdout_ = true;
  if (!silent_) interpreter_.publish_stream("stdout", text);
  return {};
}

std::optional<nl::json> CellOutput::on_frame(const nl::json& frame) {
  std::string type = frame.value("type", "");
  if (type == "input_request") {
    // Without a client that allows stdin, the manager answers with an
    // error and input() raises in the cell.
    if (!allow_stdin_) return std::nullopt;
    std::string value =
        xeus::blocking_input_request(frame.value("prompt", ""), frame.value("password", false));
    return nl::json{{"type", "input_reply"}, {"id", frame.value("id", "")}, {"value", value}};
  }
  if (silent_) return std::nullopt;
  if (type == "clear_output") {
    interpreter_.clear_output(frame.value("wait", false));
  } else if (type == "display") {
    display(frame);
  }
  return std::nullopt;
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
  if (!streamed_stdout_) {
    std::string out = response.value("stdout", "");
    if (!out.empty()) interpreter_.publish_stream("stdout", out);
  }
  std::string err = response.value("stderr", "");
  if (!err.empty()) interpreter_.publish_stream("stderr", err);
  if (result_) {
    interpreter_.publish_execution_result(execution_count_, (*result_)["data"],
                                          (*result_)["metadata"]);
  }
}

}  // namespace o4s::jupyter
