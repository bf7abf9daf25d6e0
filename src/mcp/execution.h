// One cell run through the MCP server: the sinks the kernel manager writes
// the live output into, and the outcome once the manager returned. Shared
// by the thread that runs the cell, the tool call that waits for it, and
// any later get_execution.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernel/kernel_hooks.h"

namespace o4s::mcp {

using Json = nlohmann::json;

// Why a cell ended early, when the server ended it.
enum class StopReason { kNone, kInterrupted, kTimeout };

// A copy of an execution's state, taken under its lock.
// A Jupyter mime value as text: a string, or an array of strings joined.
std::string text_of(const Json& value);

struct ExecutionSnapshot {
  std::string id;
  std::string kernel_id;
  int execution_count = 0;
  std::string status;  // ok | error | interrupted | timeout | running
  std::string stdout_text;
  std::string stderr_text;
  std::string result;  // the last value's text/plain
  Json error;          // {ename, evalue, traceback} or null
  std::vector<Json> displays;
  Json files_read = Json::array();
  Json usage = Json::object();
  std::vector<Json> artifacts;  // {path, artifact_id, version_id} saved by the cell
};

class Execution : public kernel::ChunkSink, public kernel::DisplaySink, public kernel::InputSource {
 public:
  Execution(std::string id, std::string kernel_id, int execution_count);

  const std::string& id() const { return id_; }
  const std::string& kernel_id() const { return kernel_id_; }

  Status deliver(const std::string& text) override;
  Status deliver(const Json& bundle) override;
  kernel::InputAnswer ask(const std::string& prompt, bool password) override;

  // The manager's answer (or its failure); `worker_note` is said when the
  // worker died and the kernel is dead.
  void finish(const Result<Json>& response);
  void mark_stop(StopReason reason);
  bool stop_requested();  // interrupted, timed out or cancelled
  void add_artifact(Json artifact);

  // True once finished; waits at most `timeout` (and, with
  // `or_question`, only until a question waits for its answer).
  bool wait_for(std::chrono::milliseconds timeout, bool or_question = false);

  // A question for a 2026-07-28 client (an approval), which gets it as an
  // input_required result and answers on a retry of its call, so the cell
  // waits here rather than on a server-to-client request. `state` is the
  // random token the retry must echo.
  struct Question {
    std::string state;
    Json request;  // {method: "elicitation/create", params}
  };
  // Called on the cell's thread: the answer, or nullopt once `timeout`
  // passed or `give_up` says so (checked a few times a second).
  std::optional<Json> ask_question(Json request, std::chrono::seconds timeout,
                                   const std::function<bool()>& give_up);
  std::optional<Question> question();
  // False when `state` names no waiting question (answered, expired,
  // forged).
  bool answer_question(const std::string& state, Json answer);
  bool finished();
  std::chrono::steady_clock::time_point started() const { return started_; }
  // The newest complete (or partial) line of output: the progress message.
  std::string last_line();
  ExecutionSnapshot snapshot();

 private:
  const std::string id_;
  const std::string kernel_id_;
  const int execution_count_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();

  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  StopReason stop_ = StopReason::kNone;
  std::string live_stdout_;
  std::size_t live_dropped_ = 0;
  std::size_t images_kept_ = 0;  // images held in displays (slim_display)
  ExecutionSnapshot outcome_;
  std::optional<Question> question_;
  std::optional<Json> answer_;
};

}  // namespace o4s::mcp
