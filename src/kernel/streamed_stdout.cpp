#include "kernel/streamed_stdout.h"

namespace o4s::kernel {

namespace {

bool is_continuation_byte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// Removes `count` code points from the end of UTF-8 `text` (all of it if it
// has fewer). Walks back from the end: the trim is a few dozen characters.
void drop_trailing_code_points(std::string& text, std::uint64_t count) {
  std::size_t end = text.size();
  for (; count > 0 && end > 0; --count) {
    --end;
    while (end > 0 && is_continuation_byte(text[end])) --end;
  }
  text.resize(end);
}

}  // namespace

std::string assemble_streamed_stdout(const std::vector<std::string>& chunks,
                                     std::uint64_t trim_chars) {
  const bool trimming = trim_chars > 0 && chunks.size() >= 2;
  const std::size_t head_chunks = trimming ? chunks.size() - 1 : chunks.size();
  std::size_t total = 0;
  for (const auto& chunk : chunks) total += chunk.size();
  std::string text;
  text.reserve(total);
  for (std::size_t i = 0; i < head_chunks; ++i) text += chunks[i];
  if (trimming) {
    drop_trailing_code_points(text, trim_chars);
    text += chunks.back();
  }
  return text;
}

}  // namespace o4s::kernel
