#include "kernel/output_bounds.h"

#include "base/utf8.h"
#include "proto/limits.h"

namespace o4s::kernel {

namespace {

const std::string& truncation_marker() {
  static const std::string marker =
      "\n...(truncated at " + std::to_string(proto::kMaxOutputChars) + " characters)";
  return marker;
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
    text.resize(utf8::prefix_within_bytes(text, room).size());
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
  const std::size_t chars = utf8::length(chunk.text);
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

std::string cap_output_text(std::string text) {
  constexpr std::size_t bound = proto::kMaxOutputChars + proto::kMaxOutputMarkerChars;
  // Fewer bytes than the bound means fewer code points: no count needed.
  if (text.size() <= bound || utf8::length(text) <= bound) return text;
  text.resize(utf8::prefix(text, proto::kMaxOutputChars).size());
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
