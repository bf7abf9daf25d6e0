// What the manager asks of its embedder (the Python binding, or the server).
// The seams the acceptance suite patches on a Python Kernel (_readline, _send,
// _service_host_call) are explicit overrides: the manager calls them only
// while the embedder says they are overridden, so the default path has no
// Python in it at all.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "base/result.h"
#include "kernel/transport.h"
#include "proto/frame_codec.h"

namespace o4s::kernel {

using proto::Json;

// Who the worker's own files belong to and how large it may write one, so
// a file the host writes for it (a download) is the worker's like a file
// the cell wrote itself.
struct WorkerFiles {
  // The sandbox's uid and gid when a root host drops to them; nullopt: the
  // host's own ids.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> owner;
  std::optional<std::uint64_t> size_limit;  // the worker's RLIMIT_FSIZE
};

struct DispatchContext {
  std::string authorization_generation;  // for bind_bash_generation
  // True once the kernel was interrupted after this host call arrived: a
  // long host-side action (a download) stops instead of running on for a
  // cell that has already left it.
  std::function<bool()> interrupted;
  WorkerFiles worker_files;
};

// The outcome of one host call, before the manager translates it.
struct NoDispatcher {};
struct DispatchRaised {
  std::string message;  // str(exc)
};
using DispatchOutcome = std::variant<Json, DispatchRaised, NoDispatcher>;

class KernelHooks {
 public:
  virtual ~KernelHooks() = default;

  virtual DispatchOutcome dispatch(const std::string& method, const Json& args,
                                   const DispatchContext& context) = 0;

  // Overrides; called only while overridden(...) says so.
  enum class Seam { kReadline, kSend, kServiceHostCall };
  virtual bool overridden(Seam seam) const = 0;
  virtual Result<std::optional<Json>> readline_override() = 0;
  virtual Status send_override(const Json& frame) = 0;
  virtual Status service_host_call_override(const Json& frame) = 0;

  // The worker of `authorization_generation` is gone (restart, shutdown):
  // whatever the host granted it must not outlive it.
  virtual void generation_ended(const std::string& authorization_generation) {
    (void)authorization_generation;
  }
};

// The embedder's transport factory (Kernel(transport_factory=...)).
class TransportFactory {
 public:
  virtual ~TransportFactory() = default;
  virtual Result<std::shared_ptr<Transport>> make() = 0;
};

// Receives live stdout text of the current cell; an error stops delivery
// for the rest of the cell and is reported after the response arrives.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual Status deliver(const std::string& text) = 0;
  // True for a sink that bounds what it keeps itself (a background job's
  // head + rolling tail): it is given the cell's whole stream, the worker
  // streaming past the output cap and no live budget applying, so its
  // tail keeps moving however long the cell prints.
  virtual bool bounds_itself() const { return false; }
};

// Receives the current cell's displays as bundles ({data, metadata,
// display_id, update}, or {type: "clear_output", wait}); errors as ChunkSink.
class DisplaySink {
 public:
  virtual ~DisplaySink() = default;
  virtual Status deliver(const Json& bundle) = 0;
};

// What the caller answered to one input() of the cell.
struct InputAnswer {
  std::optional<std::string> value;  // the line typed, if any
  std::string error;                 // else why not (raised inside the cell)
  bool interrupt = false;            // the caller interrupted at the prompt
};

// Answers the cell's input() calls (execute(on_input=...)).
class InputSource {
 public:
  virtual ~InputSource() = default;
  virtual InputAnswer ask(const std::string& prompt, bool password) = 0;
};

}  // namespace o4s::kernel
