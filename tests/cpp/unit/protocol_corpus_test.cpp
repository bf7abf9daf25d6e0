// The host's frame codec against the shared protocol corpus
// (tests/protocol/frames.jsonl, also run against the worker's Python side by
// tests/python/test_protocol_corpus.py). Each entry is one wire line and
// `expect`, the one answer both sides give (the stricter one where they
// used to differ); a corpus entry with a per-side answer fails here.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/pipe.h"
#include "base/unique_fd.h"
#include "proto/frame_codec.h"
#include "proto/frame_types.h"
#include "proto/json_decoders.h"
#include "proto/limits.h"
#include "proto/line_reader.h"

namespace o4s::proto {
namespace {

constexpr const char* kCorpus = O4S_SOURCE_DIR "/tests/protocol/frames.jsonl";

std::vector<Json> corpus() {
  std::vector<Json> entries;
  std::ifstream in(kCorpus);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) entries.push_back(Json::parse(line));
  }
  return entries;
}

std::string from_hex(const std::string& hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

// The exact bytes on the wire: `line` (UTF-8 text), `line_hex` (bytes that
// are not UTF-8) or `build` ([piece, times] pairs, for lines too big or too
// regular to write out).
std::string wire(const Json& entry) {
  if (entry.contains("line")) return entry["line"].get<std::string>();
  if (entry.contains("line_hex")) return from_hex(entry["line_hex"].get<std::string>());
  std::string out;
  for (const Json& piece : entry["build"]) {
    const std::string text = piece[0].get<std::string>();
    const std::size_t times = piece[1].get<std::size_t>();
    out.reserve(out.size() + text.size() * times);
    for (std::size_t i = 0; i < times; ++i) out += text;
  }
  return out;
}

std::string host_expectation(const Json& entry) { return entry["expect"].get<std::string>(); }

// The value both sides must decode, when the entry pins one.
const Json* host_decoded(const Json& entry) {
  if (entry.contains("decoded")) return &entry["decoded"];
  return nullptr;
}

bool is_big(const Json& entry) { return entry.contains("build"); }

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& types, std::string_view type) {
  for (std::string_view known : types) {
    if (known == type) return true;
  }
  return false;
}

// Reads `bytes` through the host's bounded reader, fed by a writer thread
// (a pipe holds far less than the largest frame).
struct ReadThroughPipe {
  Result<std::optional<std::string>> first = std::optional<std::string>();
  Result<std::optional<std::string>> after = std::optional<std::string>();
  std::size_t oversized = 0;
};

ReadThroughPipe read_through_pipe(const std::string& bytes) {
  auto pipe = make_pipe();
  if (!pipe) std::abort();
  UniqueFd reader_fd = std::move(pipe->read);
  UniqueFd writer_fd = std::move(pipe->write);
  std::thread writer([&writer_fd, &bytes] {
    std::string_view rest = bytes;
    while (!rest.empty()) {
      ssize_t n = ::write(writer_fd.get(), rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    writer_fd.reset();
  });
  LineReader reader(reader_fd.get(), kMaxFrameBytes);
  ReadThroughPipe out;
  out.first = reader.read_line();
  out.after = reader.read_line();
  out.oversized = reader.oversized_lines();
  reader_fd.reset();
  writer.join();
  return out;
}

TEST(ProtocolCorpus, IsLargeAndNamesAreUnique) {
  const std::vector<Json> entries = corpus();
  ASSERT_GT(entries.size(), 60u) << kCorpus;
  std::set<std::string> names;
  for (const Json& entry : entries) {
    EXPECT_TRUE(names.insert(entry["name"].get<std::string>()).second) << entry["name"];
  }
}

TEST(ProtocolCorpus, EveryEntryHoldsOneExpectationForBothSides) {
  for (const Json& entry : corpus()) {
    SCOPED_TRACE(entry["name"].get<std::string>());
    ASSERT_TRUE(entry.contains("expect"));
    for (const char* per_side : {"expect_host", "expect_worker", "decoded_host", "decoded_worker",
                                 "decoded_host_json", "decoded_worker_json"}) {
      EXPECT_FALSE(entry.contains(per_side)) << per_side;
    }
  }
}

TEST(ProtocolCorpus, EveryFrameTypeHasARealFrameAndEveryTypeIsKnown) {
  std::set<std::string> host_to_worker;
  std::set<std::string> worker_to_host;
  for (const Json& entry : corpus()) {
    SCOPED_TRACE(entry["name"].get<std::string>());
    if (!entry["type"].is_string() || entry.value("unknown_type", false)) continue;
    const std::string type = entry["type"].get<std::string>();
    const std::string direction = entry["direction"].get<std::string>();
    if (direction == "host_to_worker") {
      EXPECT_TRUE(listed(frame::kHostToWorker, type)) << type;
      if (host_expectation(entry) == "ok") host_to_worker.insert(type);
    } else if (direction == "worker_to_host") {
      EXPECT_TRUE(listed(frame::kWorkerToHost, type)) << type;
      if (host_expectation(entry) == "ok") worker_to_host.insert(type);
    } else {
      EXPECT_TRUE(listed(frame::kHostToWorker, type) || listed(frame::kWorkerToHost, type)) << type;
    }
  }
  for (std::string_view type : frame::kHostToWorker) {
    EXPECT_TRUE(host_to_worker.count(std::string(type))) << "no host->worker frame: " << type;
  }
  for (std::string_view type : frame::kWorkerToHost) {
    EXPECT_TRUE(worker_to_host.count(std::string(type))) << "no worker->host frame: " << type;
  }
}

TEST(ProtocolCorpus, EveryLineDecodesAsTheHostExpects) {
  for (const Json& entry : corpus()) {
    if (is_big(entry) && host_expectation(entry) == "oversize") continue;  // the reader's job
    SCOPED_TRACE(entry["name"].get<std::string>());
    const std::string expect = host_expectation(entry);
    const std::string line = wire(entry);
    Result<Json> decoded = decode_frame(line);
    if (expect == "malformed") {
      ASSERT_FALSE(decoded.ok()) << line.substr(0, 200);
      EXPECT_EQ(decoded.error().code, ErrorCode::kProtocol);
      continue;
    }
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    if (expect == "blank") {
      EXPECT_EQ(decoded.value(), Json::object());
    } else if (expect == "not_object") {
      EXPECT_FALSE(decoded.value().is_object());
    } else {
      ASSERT_EQ(expect, "ok");
      ASSERT_TRUE(decoded.value().is_object());
      const std::string type = entry["type"].is_string() ? entry["type"].get<std::string>() : "";
      EXPECT_EQ(frame_type(decoded.value()), type);
    }
    if (const Json* want = host_decoded(entry)) {
      EXPECT_EQ(decoded.value(), *want);
    }
  }
}

TEST(ProtocolCorpus, TheFastParserGivesTheReferenceAnswer) {
  for (const Json& entry : corpus()) {
    const std::string expect = host_expectation(entry);
    if (expect == "blank" || expect == "oversize") continue;
    SCOPED_TRACE(entry["name"].get<std::string>());
    const std::string line = wire(entry);
    Result<Json> reference = detail::decode_reference(line);
    Result<Json> decoded = decode_frame(line);
    ASSERT_EQ(reference.ok(), decoded.ok());
    if (reference.ok()) {
      EXPECT_EQ(reference.value(), decoded.value());
    }
  }
}

TEST(ProtocolCorpus, TheHostEncodesEachFrameToThePinnedLine) {
  std::size_t checked = 0;
  for (const Json& entry : corpus()) {
    if (!entry.contains("host_encoded")) continue;
    SCOPED_TRACE(entry["name"].get<std::string>());
    const std::string line = encode_frame(entry["decoded"]);
    EXPECT_EQ(line, entry["host_encoded"].get<std::string>());
    // And the host reads its own line back to the same frame.
    Result<Json> back = decode_frame(line);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.value(), entry["decoded"]);
    ++checked;
  }
  EXPECT_GT(checked, 40u);
}

TEST(ProtocolCorpus, TheHostReadsTheWorkersEncodingOfEachFrame) {
  // worker_encoded is what the worker's encoder writes for `decoded`
  // (pinned by the Python suite): the host must read the same frame back.
  std::size_t checked = 0;
  for (const Json& entry : corpus()) {
    if (!entry.contains("worker_encoded") || !entry.contains("decoded")) continue;
    SCOPED_TRACE(entry["name"].get<std::string>());
    Result<Json> decoded = decode_frame(entry["worker_encoded"].get<std::string>());
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(decoded.value(), entry["decoded"]);
    ++checked;
  }
  EXPECT_GT(checked, 40u);
}

TEST(ProtocolCorpus, ObjectsWithoutAPinnedValueSurviveARoundTrip) {
  for (const Json& entry : corpus()) {
    if (host_expectation(entry) != "ok" || host_decoded(entry) != nullptr) continue;
    SCOPED_TRACE(entry["name"].get<std::string>());
    Result<Json> decoded = decode_frame(wire(entry));
    ASSERT_TRUE(decoded.ok());
    Result<Json> again = decode_frame(encode_frame(decoded.value()));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value(), decoded.value());
  }
}

TEST(ProtocolCorpus, BigLinesGoThroughTheBoundedReaderAsExpected) {
  std::size_t checked = 0;
  for (const Json& entry : corpus()) {
    if (!is_big(entry) || entry["direction"] != "worker_to_host") continue;
    SCOPED_TRACE(entry["name"].get<std::string>());
    const std::string line = wire(entry);
    ReadThroughPipe read = read_through_pipe(line);
    if (host_expectation(entry) == "oversize") {
      ASSERT_FALSE(read.first.ok());
      EXPECT_EQ(read.first.error().code, ErrorCode::kProtocol);
      EXPECT_EQ(read.oversized, 1u);
    } else {
      ASSERT_TRUE(read.first.ok()) << read.first.error().message;
      ASSERT_TRUE(read.first.value().has_value());
      EXPECT_EQ(read.first.value()->size(), line.size());
      EXPECT_TRUE(decode_frame(*read.first.value()).ok());
      EXPECT_EQ(read.oversized, 0u);
    }
    // Either way the stream stays aligned: what follows is the end.
    ASSERT_TRUE(read.after.ok());
    EXPECT_FALSE(read.after.value().has_value());
    ++checked;
  }
  EXPECT_GE(checked, 3u);
}

}  // namespace
}  // namespace o4s::proto
