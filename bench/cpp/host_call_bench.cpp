// A host-call round trip through the real KernelManager and an in-memory
// worker: decode the host_call, dispatch, encode and write the
// host_response. The per_call counter is the manager's cost per call; the
// 0-call case is the bare execute transaction around them.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "fake_worker.h"
#include "kernel/kernel_manager.h"

namespace {

using o4s::bench::FakeWorkerFactory;
using o4s::bench::PongHooks;
using o4s::kernel::KernelManager;
using o4s::kernel::KernelOptions;

void BM_HostCallRoundTrip(benchmark::State& state) {
  const long long calls = state.range(0);
  KernelManager manager(KernelOptions{}, std::make_shared<PongHooks>(),
                        std::make_shared<FakeWorkerFactory>());
  if (auto started = manager.start(5.0); !started) {
    state.SkipWithError(started.error().message.c_str());
    return;
  }
  const std::string code = std::to_string(calls);
  for (auto _ : state) {
    auto response = manager.execute(code, "agent", "cell", nullptr);
    if (!response) {
      state.SkipWithError(response.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(response);
  }
  if (calls > 0) {
    // Seconds per call: a rate over the whole run, inverted.
    state.counters["per_call"] = benchmark::Counter(
        static_cast<double>(calls),
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  }
  manager.shutdown();
}

BENCHMARK(BM_HostCallRoundTrip)->Arg(0)->Arg(1)->Arg(1000);

}  // namespace
