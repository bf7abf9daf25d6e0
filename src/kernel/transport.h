// How frames reach a worker: a local pipe pair, or any object a transport
// factory returns (the Python bindings adapt those). The manager is the only
// reader; write_line may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace o4s::proc {
class ChildProcess;
class DrainTarget;
}  // namespace o4s::proc

namespace o4s::kernel {

struct StderrSnapshot {
  std::string text;  // raw bytes
  std::size_t retained = 0;
  std::size_t seen = 0;
  std::size_t dropped = 0;
  bool closed = true;  // the writer side is gone, nothing more will arrive
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Writes one already-terminated line, whole, and flushes.
  virtual Status write_line(std::string_view line) = 0;
  // Writes a short `line` only if that needs no real wait (`patience` at
  // most for a write under way): no write stuck on a full pipe. False when
  // it was not written. For a frame that must never hold up its caller (an
  // interrupt's, sent before the signal; the polite shutdown). A transport
  // that cannot tell writes it as any line.
  virtual bool offer_line(std::string_view line,
                          std::chrono::milliseconds patience = std::chrono::milliseconds(100)) {
    (void)patience;
    return write_line(line).ok();
  }
  // One line including '\n'; std::nullopt at end of stream.
  virtual Result<std::optional<std::string>> read_line() = 0;
  virtual bool alive() = 0;
  // Transport-level interrupt (remote workers); false = cannot.
  virtual bool interrupt() = 0;
  // Hard stop; also the transport-neutral way to wake a blocked read_line.
  virtual void kill() = 0;
  virtual Status close(bool graceful) = 0;

  // The local worker's host pid, when there is one.
  virtual std::optional<pid_t> local_pid() = 0;
  virtual std::optional<StderrSnapshot> stderr_snapshot() = 0;
  // How the local worker ended (exit status, or -signal), once it has.
  virtual std::optional<int> exit_status() { return std::nullopt; }
  // Frames dropped by the reader for being over the cap or unreadable.
  virtual std::size_t dropped_lines() const { return 0; }
  // See proto::LineReader::set_wake. A transport without a local reader
  // ignores it (output that arrives meanwhile is delivered afterwards).
  virtual void set_wake(int fd, std::function<void()> on_wake) {
    (void)fd;
    (void)on_wake;
  }
  // Bytes written to the worker that it has not read yet, where the
  // transport can tell (a worker that stops reading must not block us).
  virtual std::optional<std::size_t> unread_input_bytes() { return std::nullopt; }
  // Where output that belongs to no cell goes (the worker's stderr tail);
  // null where the transport keeps none.
  virtual std::shared_ptr<proc::DrainTarget> log_target() { return nullptr; }
};

}  // namespace o4s::kernel
