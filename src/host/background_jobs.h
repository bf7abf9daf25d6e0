// Background jobs (issue 30 point 4; spec host.md §5 "background"): code a
// cell starts with host.exec_background runs in a worker of its own, so a
// crash or a runaway loop there never touches the interactive namespace.
// The host module declares what the four host methods need; the front
// doors' shared layer (host_hooks/background_workers.*) runs the workers,
// since starting one takes the kernel manager, which the host never links.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/result.h"

namespace o4s::host {

class HostDispatcher;
struct CallContext;
struct HostSettings;
using Json = nlohmann::json;

// Who started a job: its own worker's host calls go to the same dispatcher,
// for the same conversation, under the same policy, and never ask a person
// (a job runs unattended: an "ask" there resolves by the unattended policy).
struct JobCaller {
  std::weak_ptr<HostDispatcher> dispatcher;
  std::optional<std::string> frame_id;
};

// One kernel's background jobs. Every job ends (its worker stopped and
// reaped) by stop_all(), which the kernel calls when its worker's
// generation ends (restart, shutdown), and by the destructor.
class BackgroundJobs {
 public:
  virtual ~BackgroundJobs() = default;
  // {"exec_id", "state"} at once; the worker starts on a thread of its own.
  // A soft failure ({"error"}) past the kernel's bound on running jobs.
  virtual Result<Json> start(const std::string& code, const std::string& origin, JobCaller caller,
                             const HostSettings& settings) = 0;
  // The job's state, usage and bounded output so far; nullopt: unknown id.
  virtual std::optional<Json> peek(const std::string& exec_id) = 0;
  virtual std::optional<Json> interrupt(const std::string& exec_id) = 0;
  // Every job kept (running ones and the most recent finished), no output.
  virtual Json list() = 0;
  virtual void stop_all() = 0;
  // Jobs whose worker is starting or alive: each is a worker process, which
  // a front door counts against its limit (the MCP server's --max-kernels).
  virtual std::size_t running() const = 0;
};

// The host methods' handlers (rows in host_methods.cpp).
Result<Json> exec_background(HostDispatcher& host, const Json& args, const CallContext& context);
Result<Json> exec_peek(HostDispatcher& host, const Json& args, const CallContext& context);
Result<Json> exec_interrupt(HostDispatcher& host, const Json& args, const CallContext& context);
Result<Json> exec_list(HostDispatcher& host, const Json& args, const CallContext& context);

}  // namespace o4s::host
