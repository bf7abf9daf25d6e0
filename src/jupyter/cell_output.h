// One execute_request's output on the Jupyter side: live stdout as
// `stream` messages, the worker's display frames (contracts.md) as
// display_data / update_display_data / clear_output / execute_result, and
// input() as an input_request on the stdin channel.
#pragma once

#include <optional>
#include <string>
#include <xeus/xinterpreter.hpp>

#include "kernel/kernel_hooks.h"

namespace o4s::jupyter {

class CellOutput : public kernel::ChunkSink,
                   public kernel::DisplaySink,
                   public kernel::InputSource {
 public:
  CellOutput(xeus::xinterpreter& interpreter, int execution_count, bool silent, bool allow_stdin);

  Status deliver(const std::string& text) override;
  // A display bundle ({data, metadata, display_id, update}) or a
  // {type: "clear_output", wait} from the manager.
  Status deliver(const nl::json& bundle) override;
  // input() in the cell: an input_request on the client's stdin channel.
  kernel::InputAnswer ask(const std::string& prompt, bool password) override;
  // After the response: what was not streamed (stderr; stdout only when no
  // chunk carried it) and the cell's result.
  void finish(const nl::json& response);

 private:
  void display(const nl::json& frame);

  xeus::xinterpreter& interpreter_;
  int execution_count_;
  bool silent_;
  bool allow_stdin_;
  bool streamed_stdout_ = false;
  std::optional<nl::json> result_;  // the cell's last value, as a bundle
};

}  // namespace o4s::jupyter
