// The execute request as a frame loop handler (spec §3.6): the running
// cell's chunks, displays and input requests go to its caller as they come,
// bounded; its response ends the wait. What finishing the response takes
// (KernelManager::finish_cell) is read from here afterwards.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "kernel/cell_io.h"
#include "kernel/frame_wait.h"
#include "kernel/output_bounds.h"
#include "kernel/sink_capture.h"
#include "kernel/transport.h"

namespace o4s::kernel {

// Where the cell's live output and input() questions go (each may be null).
struct CellCallers {
  ChunkSink* on_chunk = nullptr;
  DisplaySink* on_display = nullptr;
  InputSource* on_input = nullptr;
};

class CellWait final : public FrameWait {
 public:
  using Log = std::function<void(const std::string&)>;
  // `capture` is the cell's sink capture (R), or null.
  CellWait(std::string cell_id, CellCallers callers, std::unique_ptr<CellCapture> capture, Log log);
  ~CellWait() override;

  // Sink output is passed on by the loop's thread while it waits for
  // frames (until this wait is destroyed).
  void watch_sink_output(std::shared_ptr<Transport> reader);

  Verdict judge(FrameKind kind, const Json& frame) override;
  Error at_end(Error error, bool end_of_stream) override;
  bool is_running_cell(const Json& input_request) const override;
  InputSource* input_source() const override { return callers_.on_input; }

  const std::string& cell_id() const { return cell_id_; }
  const ChunkKeeper& kept_chunks() const { return kept_chunks_; }
  bool sidecar_event() const { return sidecar_event_; }
  // The first error a caller's sink returned, if any.
  std::optional<Error>& chunk_error() { return chunk_error_; }
  // Ends sink capture: the live tail delivered, and the drained text put
  // in the response when the worker says it captured through the sinks.
  // `strays`: where output the cell's leftover processes write later goes.
  void finish_capture(Json& response, std::shared_ptr<proc::DrainTarget> strays);
  // The displays kept for the response (only when the cell displayed).
  void add_displays(Json& response);

 private:
  void deliver_live(const std::string& text);
  void keep_chunk(const Json& frame);
  void keep_display(const Json& frame);

  const std::string cell_id_;
  const CellCallers callers_;
  std::unique_ptr<CellCapture> capture_;
  Log log_;
  std::shared_ptr<Transport> watched_;
  ChunkKeeper kept_chunks_;
  LiveBudget live_budget_;
  DisplayCollector displays_;
  std::optional<Error> chunk_error_;
  bool sidecar_event_ = false;
};

}  // namespace o4s::kernel
