// Host-side sink capture (spec kernel.md §7.4): an R cell's output never
// travels on the protocol pipe. For each cell the host makes two fifos in the
// kernel's sink directory, opens their read ends before it sends `execute`,
// and the supervisor thread drains both into bounded buffers while the cell
// runs. The first kSinkRetainedBytes of each stream are kept, everything is
// counted, and draining never stops on its own: R opens the fifos blocking,
// and a reader that gave up would hang that writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"
#include "proc/drain_target.h"
#include "proto/frame_codec.h"

namespace o4s::kernel {

inline constexpr std::size_t kSinkRetainedBytes = 1'000'000;
// After the response the worker has written all it will (R closes its
// fifos and takes back fds 1/2 first): a writer still holding a fifo is a
// process the cell left running, and no cell waits for it.
inline constexpr std::chrono::milliseconds kSinkFinishGrace{0};
inline constexpr std::string_view kSinkTruncationMarker = "\n...(truncated at 1000000 bytes)";

// One drained stream. append/mark_closed run on the supervisor thread; the
// rest on the cell's thread.
class SinkStream final : public proc::DrainTarget {
 public:
  // wake_fd (an eventfd, borrowed; -1 for none) is signalled whenever
  // retained bytes grow, so the cell's thread can pass them on live.
  SinkStream(std::size_t budget, int wake_fd);

  void append(std::string_view bytes) override;
  void mark_closed() override;

  // Retained bytes not taken before.
  std::string take_new();

  struct Snapshot {
    std::string retained;
    std::size_t seen = 0;
    std::size_t dropped = 0;
    bool closed = false;
  };
  Snapshot snapshot() const;

 private:
  const std::size_t budget_;
  const int wake_fd_;
  mutable std::mutex mutex_;
  std::string retained_;
  std::size_t taken_ = 0;
  std::size_t seen_ = 0;
  bool closed_ = false;
};

// What a cell's children write after its response (a process the cell left
// running, holding a fifo): passed to the worker's log until the last of
// them is gone, so it never blocks on a full fifo and never joins a later
// cell. Runs on the supervisor thread.
class StrayOutput final : public proc::DrainTarget {
 public:
  explicit StrayOutput(std::shared_ptr<proc::DrainTarget> log) : log_(std::move(log)) {}
  void append(std::string_view bytes) override {
    if (log_) log_->append(bytes);
  }
  // The log's own stream is still open: only this fifo ended.
  void mark_closed() override {}

 private:
  std::shared_ptr<proc::DrainTarget> log_;
};

// The kernel's private directory for sink fifos (mode 0700), removed with
// everything left in it when the kernel goes. It is locked (an OFD lock)
// while its host lives; create() first removes this uid's unlocked ones older
// than a minute, left by hosts that were killed outright.
class SinkDirectory {
 public:
  static Result<std::unique_ptr<SinkDirectory>> create();
  ~SinkDirectory();
  SinkDirectory(const SinkDirectory&) = delete;
  SinkDirectory& operator=(const SinkDirectory&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return dir_.get(); }
  // Fifo numbers come from here, never from a cell id (a cell id is
  // caller-chosen text and must not name files).
  std::uint64_t next_number() { return ++counter_; }
  // Removes it now, for a process that ends without running destructors
  // (xeus 2.4 leaves by std::exit after a shutdown_request). The object
  // stays valid: a fifo made later fails, and the destructor does nothing.
  void remove();

 private:
  SinkDirectory(std::string path, UniqueFd dir) : path_(std::move(path)), dir_(std::move(dir)) {}
  std::string path_;
  UniqueFd dir_;
  std::uint64_t counter_ = 0;
  bool removed_ = false;
};

// One cell's pair of fifos, watched until finish() or destruction, which
// also unlinks them.
class CellCapture {
 public:
  static Result<std::unique_ptr<CellCapture>> open(SinkDirectory& directory);
  ~CellCapture();
  CellCapture(const CellCapture&) = delete;
  CellCapture& operator=(const CellCapture&) = delete;

  const std::string& out_path() const { return out_path_; }
  const std::string& err_path() const { return err_path_; }
  int wake_fd() const { return wake_.get(); }

  // Retained stdout not yet passed on, as text: cut after the last complete
  // UTF-8 sequence (the rest waits for its continuation bytes), invalid
  // bytes replaced. Consumes the wake signal.
  std::string take_live_stdout();

  struct Finished {
    std::string stdout_text;  // with the truncation marker if bytes were dropped
    std::string stderr_text;
    proto::Json usage;  // the eight stdout_/stderr_ counters
    // Live stdout still owed to on_chunk (held back partial sequences).
    std::string live_tail;
  };
  // Reads each stream to its end, waiting up to `grace` per stream for
  // writers still holding it. What such a writer writes later goes to
  // `strays` (the worker's log; dropped when null), never to the cell.
  Finished finish(std::chrono::milliseconds grace,
                  std::shared_ptr<proc::DrainTarget> strays = nullptr);

 private:
  CellCapture(SinkDirectory& directory, std::uint64_t number);
  Status make_stream(const std::string& name, std::shared_ptr<SinkStream> stream,
                     std::uint64_t& token);
  void end_watches();
  // Ends the stream's watch and reads its remainder on this thread, up to
  // end of stream or the deadline.
  void drain_rest(std::uint64_t& token, SinkStream& stream,
                  std::chrono::steady_clock::time_point deadline,
                  const std::shared_ptr<proc::DrainTarget>& strays);
  // Opens and closes a write end: a fifo whose writer never came (the worker
  // refused the frame) reaches end of stream; one still held open by a
  // writer is unaffected.
  void release_unopened(const std::string& name);

  SinkDirectory& directory_;
  std::string out_name_;
  std::string err_name_;
  std::string out_path_;
  std::string err_path_;
  UniqueFd wake_;
  std::shared_ptr<SinkStream> out_;
  std::shared_ptr<SinkStream> err_;
  std::uint64_t out_token_ = 0;
  std::uint64_t err_token_ = 0;
  std::string live_carry_;  // an incomplete UTF-8 sequence awaiting its tail
};

}  // namespace o4s::kernel
