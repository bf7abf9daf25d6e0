// Frame encode/decode for the frames a cell's hot path carries: the execute
// request, host_call / host_response pairs, a full 64,000-char stdout chunk
// (the worker's largest streamed frame) and a typical response.
#include <benchmark/benchmark.h>

#include <string>

#include "proto/frame_codec.h"
#include "proto/json_decoders.h"

namespace {

using o4s::proto::Json;

Json execute_frame() {
  return {{"type", "execute"},
          {"id", "0b9d5c1e-8a7f-4f0e-9c55-3d1f2a6b7c8d"},
          {"code", "x = 1"},
          {"origin", "agent"}};
}

Json host_call_frame() {
  return {{"type", "host_call"},
          {"id", "hc-1700000000-42"},
          {"method", "ping"},
          {"args", Json::array()}};
}

Json host_response_frame() {
  return {{"type", "host_response"}, {"id", "hc-1700000000-42"}, {"data", "pong"}};
}

Json stdout_chunk_frame() {
  return {{"type", "stdout_chunk"},
          {"id", "0b9d5c1e-8a7f-4f0e-9c55-3d1f2a6b7c8d"},
          {"text", std::string(64'000, 'x')}};
}

// Non-ASCII text is emitted raw, so its cost differs from plain ASCII.
Json stdout_chunk_utf8_frame() {
  std::string text;
  for (int i = 0; i < 16'000; ++i) text += "\xc3\xa9\xc3\xa9";  // "éé"
  return {{"type", "stdout_chunk"}, {"id", "0b9d5c1e-8a7f-4f0e-9c55-3d1f2a6b7c8d"}, {"text", text}};
}

Json response_frame() {
  return {{"type", "response"},
          {"id", "0b9d5c1e-8a7f-4f0e-9c55-3d1f2a6b7c8d"},
          {"stdout", "hello\n"},
          {"stderr", ""},
          {"error", nullptr},
          {"interrupted", false},
          {"files_read", Json::array()},
          {"guards", Json::object()},
          {"trace", {{"error_call", nullptr}, {"error_lineno", nullptr}}},
          {"usage", {{"cpu_s", 0.0001}, {"peak_rss_kb", 13264}, {"wall_s", 0.0001}}}};
}

void BM_Encode(benchmark::State& state, Json (*make)()) {
  const Json frame = make();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string line = o4s::proto::encode_frame(frame);
    bytes = line.size();
    benchmark::DoNotOptimize(line);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

template <typename Decode>
void decode_loop(benchmark::State& state, Json (*make)(), Decode decode) {
  const std::string line = o4s::proto::encode_frame(make());
  for (auto _ : state) {
    auto frame = decode(line);
    if (!frame) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(frame);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(line.size()));
}

void BM_Decode(benchmark::State& state, Json (*make)()) {
  decode_loop(state, make, [](const std::string& line) { return o4s::proto::decode_frame(line); });
}

// The reference parser alone, for scale: what decode_frame cost before
// simdjson took the common case.
void BM_DecodeReference(benchmark::State& state, Json (*make)()) {
  decode_loop(state, make,
              [](const std::string& line) { return o4s::proto::detail::decode_reference(line); });
}

BENCHMARK_CAPTURE(BM_Encode, execute, execute_frame);
BENCHMARK_CAPTURE(BM_Encode, host_call, host_call_frame);
BENCHMARK_CAPTURE(BM_Encode, host_response, host_response_frame);
BENCHMARK_CAPTURE(BM_Encode, stdout_chunk_64k, stdout_chunk_frame);
BENCHMARK_CAPTURE(BM_Encode, stdout_chunk_64k_utf8, stdout_chunk_utf8_frame);
BENCHMARK_CAPTURE(BM_Encode, response, response_frame);

BENCHMARK_CAPTURE(BM_Decode, execute, execute_frame);
BENCHMARK_CAPTURE(BM_Decode, host_call, host_call_frame);
BENCHMARK_CAPTURE(BM_Decode, host_response, host_response_frame);
BENCHMARK_CAPTURE(BM_Decode, stdout_chunk_64k, stdout_chunk_frame);
BENCHMARK_CAPTURE(BM_Decode, stdout_chunk_64k_utf8, stdout_chunk_utf8_frame);
BENCHMARK_CAPTURE(BM_Decode, response, response_frame);

BENCHMARK_CAPTURE(BM_DecodeReference, host_call, host_call_frame);
BENCHMARK_CAPTURE(BM_DecodeReference, stdout_chunk_64k, stdout_chunk_frame);
BENCHMARK_CAPTURE(BM_DecodeReference, response, response_frame);

}  // namespace
