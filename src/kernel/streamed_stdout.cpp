#include "kernel/streamed_stdout.h"

#include "base/utf8.h"

namespace o4s::kernel {

namespace {

// Removes `count` code points from the end of UTF-8 `text` (all of it if it
// has fewer). Walks back from the end: the trim is a few dozen characters.
void drop_trailing_code_points(std::string& text, std::uint64_t count) {
  std::size_t end = text.size();
  for (; count > 0 && end > 0; --count) {
    --end;
    while (end > 0 && utf8::is_continuation(text[end])) --end;
  }
  text.resize(end);
}

std::optional<std::uint64_t> unsigned_field(const proto::Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) {
    return std::nullopt;
  }
  return it->get<std::uint64_t>();
}

}  // namespace

std::optional<StreamDeclaration> take_stream_declaration(proto::Json& response) {
  if (!response.is_object()) return std::nullopt;
  auto it = response.find(kStdoutStreamField);
  if (it == response.end()) return std::nullopt;
  proto::Json field = std::move(*it);
  response.erase(it);
  if (!field.is_object()) return std::nullopt;
  auto stream = field.find("stream");
  auto chunks = unsigned_field(field, "chunks");
  auto trim = unsigned_field(field, "head_trim");
  if (stream == field.end() || !stream->is_number_integer() || !chunks) return std::nullopt;
  return StreamDeclaration{stream->get<std::int64_t>(), *chunks, trim.value_or(0)};
}

std::optional<std::string> rebuild_declared_stdout(const std::vector<StreamedChunk>& chunks,
                                                   const StreamDeclaration& declared) {
  std::vector<std::string> texts;
  std::uint64_t expected = 0;
  for (const auto& chunk : chunks) {
    if (chunk.stream != declared.stream) continue;  // a stale buffer's, not this Cell's
    if (!chunk.seq || *chunk.seq < 0) return std::nullopt;
    // Written after the response was built (a thread still printing).
    if (static_cast<std::uint64_t>(*chunk.seq) >= declared.chunks) continue;
    if (static_cast<std::uint64_t>(*chunk.seq) != expected) return std::nullopt;
    ++expected;
    texts.push_back(chunk.text);
  }
  if (expected != declared.chunks) return std::nullopt;
  return assemble_streamed_stdout(texts, declared.head_trim);
}

std::string concatenate_chunks(const std::vector<StreamedChunk>& chunks) {
  std::size_t total = 0;
  for (const auto& chunk : chunks) total += chunk.text.size();
  std::string text;
  text.reserve(total);
  for (const auto& chunk : chunks) text += chunk.text;
  return text;
}

std::string assemble_streamed_stdout(const std::vector<std::string>& texts,
                                     std::uint64_t trim_chars) {
  const bool trimming = trim_chars > 0 && texts.size() >= 2;
  const std::size_t head_texts = trimming ? texts.size() - 1 : texts.size();
  std::size_t total = 0;
  for (const auto& text : texts) total += text.size();
  std::string joined;
  joined.reserve(total);
  for (std::size_t i = 0; i < head_texts; ++i) joined += texts[i];
  if (trimming) {
    drop_trailing_code_points(joined, trim_chars);
    joined += texts.back();
  }
  return joined;
}

}  // namespace o4s::kernel
