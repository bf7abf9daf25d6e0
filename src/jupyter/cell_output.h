// One execute_request's output on the Jupyter side: live stdout as
// `stream` messages, the worker's display frames (contracts.md) as
// display_data / update_display_data / clear_output / execute_result, and
// input() as an input_request on the stdin channel. Live stdout goes
// through the kernel's StreamCoalescer (fewer, larger stream messages);
// everything else is published in order behind it.
#pragma once

#include <optional>
#include <string>
#include <xeus/xinterpreter.hpp>

#include "jupyter/stream_coalescer.h"
#include "kernel/kernel_hooks.h"

namespace o4s::jupyter {

class CellOutput : public kernel::ChunkSink,
                   public kernel::DisplaySink,
                   public kernel::InputSource {
 public:
  // `stdout_stream` publishes on `interpreter`'s stdout stream; it outlives
  // the cell.
  CellOutput(xeus::xinterpreter& interpreter, StreamCoalescer& stdout_stream, int execution_count,
             bool silent, bool allow_stdin);
  // Publishes what is still pending, so nothing of this cell comes after
  // the messages that end it (the error, the reply, idle).
  ~CellOutput() override;
  CellOutput(const CellOutput&) = delete;
  CellOutput& operator=(const CellOutput&) = delete;

  Status deliver(const std::string& text) override;
  // A display bundle ({data, metadata, display_id, update}) or a
  // {type: "clear_output", wait} from the manager.
  Status deliver(const nl::json& bundle) override;
  // input() in the cell: an input_request on the client's stdin channel.
  kernel::InputAnswer ask(const std::string& prompt, bool password) override;
  // After the response: what was not streamed (stderr; stdout only when no
  // chunk carried it) and the cell's result.
  void finish(const nl::json& response);
  // Publishes the pending stdout now (before an error the cell ends with).
  void flush() { stdout_stream_.flush(); }

 private:
  void display(const nl::json& frame);

  xeus::xinterpreter& interpreter_;
  StreamCoalescer& stdout_stream_;
  int execution_count_;
  bool silent_;
  bool allow_stdin_;
  bool streamed_stdout_ = false;
  std::optional<nl::json> result_;  // the cell's last value, as a bundle
};

}  // namespace o4s::jupyter
