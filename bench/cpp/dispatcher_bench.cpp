// The host dispatcher's decision for one call: decode, permission gate,
// handler, and the audit row it always writes, against a real SQLite store.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "base/sha256.h"
#include "host/dispatcher.h"
#include "store/store.h"

namespace {

using o4s::host::CallContext;
using o4s::host::HostDispatcher;
using Json = nlohmann::json;

// A throwaway store and workspace per benchmark, removed afterwards.
class Session {
 public:
  Session() {
    char pattern[] = "/tmp/o4s-dispatcher-bench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) std::abort();
    root_ = pattern;
    std::filesystem::create_directories(root_ + "/workspace");
    auto store = o4s::store::Store::open(root_ + "/store.db");
    if (!store) std::abort();
    store_ = store.value();
    dispatcher_ = std::make_unique<HostDispatcher>(
        o4s::host::DispatcherConfig{store_, root_ + "/workspace", root_, root_ + "/artifacts"});
    context_.frame_id = "bench-frame";
    context_.bash_generation = "kernel:bench";
  }
  ~Session() {
    dispatcher_.reset();
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  HostDispatcher& dispatcher() { return *dispatcher_; }
  o4s::store::Store& store() { return *store_; }
  const CallContext& context() const { return context_; }
  std::string workspace() const { return root_ + "/workspace"; }

 private:
  std::string root_;
  std::shared_ptr<o4s::store::Store> store_;
  std::unique_ptr<HostDispatcher> dispatcher_;
  CallContext context_;
};

void run(benchmark::State& state, Session& session, const std::string& method, const Json& args) {
  for (auto _ : state) {
    auto result = session.dispatcher().call(method, args, session.context());
    if (!result) {
      state.SkipWithError(result.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(result);
  }
}

// authorize_bash's arguments, as the worker's bash client sends them.
Json bash_request(Session& session, const std::string& command) {
  Json spec{{"command", command},
            {"command_sha256", o4s::sha256_hex(command)},
            {"cwd", session.workspace()},
            {"workspace", session.workspace()},
            {"generation", "kernel:bench"},
            {"challenge", "bench-challenge-0123456789abcdef"},
            {"timeout", 30}};
  return Json::array({spec});
}

// Ungated: decode, handler and the audit row.
void BM_DispatcherUngated(benchmark::State& state) {
  Session session;
  run(state, session, "capabilities", Json::array());
}

// Gated and allowed by a standing conversation rule: the whole decision,
// precheck and capability issue included.
void BM_DispatcherBashAllowed(benchmark::State& state) {
  Session session;
  if (!session.store().set_permission_rule("conversation", "bench-frame", "bash", "*", "allow")) {
    state.SkipWithError("could not store the rule");
    return;
  }
  run(state, session, "authorize_bash", bash_request(session, "ls -la"));
}

// Refused by the static precheck before any rule is read.
void BM_DispatcherBashPrechecked(benchmark::State& state) {
  Session session;
  run(state, session, "authorize_bash", bash_request(session, "rm -rf /"));
}

}  // namespace

BENCHMARK(BM_DispatcherUngated);
BENCHMARK(BM_DispatcherBashAllowed);
BENCHMARK(BM_DispatcherBashPrechecked);
