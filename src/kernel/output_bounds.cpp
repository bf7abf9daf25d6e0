#include "kernel/output_bounds.h"

#include <algorithm>

#include "proto/limits.h"

namespace o4s::kernel {

namespace {

bool is_continuation_byte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

const std::string& truncation_marker() {
  static const std::string marker =
      "\n...(truncated at " + std::to_string(proto::kMaxOutputChars) + " characters)";
  return marker;
}

// The byte length of the first `chars` code points of `text`.
std::size_t prefix_bytes(const std::string& text, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation_byte(text[i])) continue;
    if (seen == chars) return i;
    ++seen;
  }
  return text.size();
}

// Serialised size, the way the caller's conversion would see it.
std::size_t dumped_size(const proto::Json& value) {
  return value.dump(-1, ' ', false, proto::Json::error_handler_t::replace).size();
}

// Shrinks `value` to about `budget` serialised bytes; returns the size used.
std::size_t bound_value(proto::Json& value, std::size_t budget, bool& cut) {
  if (value.is_string()) {
    auto& text = value.get_ref<std::string&>();
    // Serialised, a byte is at most 6 (\u00XX); cut by bytes, on a boundary.
    std::size_t room = budget / 6;
    if (text.size() + 2 <= budget || dumped_size(value) <= budget) return dumped_size(value);
    std::size_t end = std::min(room, text.size());
    while (end > 0 && is_continuation_byte(text[end])) --end;
    text.resize(end);
    cut = true;
    return dumped_size(value);
  }
  if (value.is_array()) {
    std::size_t used = 2;
    proto::Json kept = proto::Json::array();
    for (auto& item : value) {
      if (used >= budget) {
        cut = true;
        break;
      }
      used += bound_value(item, budget - used, cut) + 1;
      if (used > budget) {
        cut = true;
        break;
      }
      kept.push_back(std::move(item));
    }
    value = std::move(kept);
    return used;
  }
  if (value.is_object()) {
    std::size_t used = 2;
    proto::Json kept = proto::Json::object();
    for (auto& [key, item] : value.items()) {
      std::size_t key_size = key.size() + 3;
      if (used + key_size >= budget) {
        cut = true;
        break;
      }
      used += key_size + bound_value(item, budget - used - key_size, cut) + 1;
      if (used > budget) {
        cut = true;
        break;
      }
      kept[key] = std::move(item);
    }
    value = std::move(kept);
    return used;
  }
  return dumped_size(value);
}

}  // namespace

bool ChunkKeeper::keep(StreamedChunk chunk) {
  const std::size_t chars = count_code_points(chunk.text);
  std::size_t& stream_chars = chars_per_stream_[chunk.stream];
  if (stream_chars + chars > proto::kKeptChunkCharsPerStream ||
      kept_bytes_ + chunk.text.size() > proto::kKeptChunkBytesPerCell) {
    ++dropped_chunks_;
    dropped_bytes_ += chunk.text.size();
    return false;
  }
  stream_chars += chars;
  kept_bytes_ += chunk.text.size();
  chunks_.push_back(std::move(chunk));
  return true;
}

bool LiveBudget::admit(std::size_t bytes) {
  if (exhausted_ || delivered_ + bytes > proto::kLiveChunkBytesPerCell) {
    exhausted_ = true;
    return false;
  }
  delivered_ += bytes;
  return true;
}

std::size_t count_code_points(const std::string& text) {
  std::size_t count = 0;
  for (char byte : text) count += is_continuation_byte(byte) ? 0 : 1;
  return count;
}

std::string cap_output_text(std::string text) {
  constexpr std::size_t bound = proto::kMaxOutputChars + proto::kMaxOutputMarkerChars;
  // Fewer bytes than the bound means fewer code points: no count needed.
  if (text.size() <= bound || count_code_points(text) <= bound) return text;
  text.resize(prefix_bytes(text, proto::kMaxOutputChars));
  text += truncation_marker();
  return text;
}

bool bound_response_fields(proto::Json& response) {
  if (!response.is_object()) return false;
  bool cut = false;
  for (auto& [key, value] : response.items()) {
    if (key == "stdout" || key == "stderr" || key == "error") {
      if (!value.is_string()) continue;
      auto& text = value.get_ref<std::string&>();
      const std::size_t before = text.size();
      text = cap_output_text(std::move(text));
      cut = cut || text.size() != before;
      continue;
    }
    if (value.is_string() &&
        value.get_ref<const std::string&>().size() * 6 + 2 <= proto::kMaxResponseFieldBytes) {
      continue;  // the common case, without a serialisation
    }
    if (value.is_primitive() && !value.is_string()) continue;
    if (!value.is_string() && dumped_size(value) <= proto::kMaxResponseFieldBytes) continue;
    bound_value(value, proto::kMaxResponseFieldBytes, cut);
  }
  return cut;
}

}  // namespace o4s::kernel
