#include "store/audit_preview.h"

#include <array>
#include <optional>

#include "base/utf8.h"

namespace o4s::store::audit {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::array<std::string_view, 4> kDerivable = {"credentials_get", "credentials_issue",
                                                        "credentials_redeem", "credentials_list"};
constexpr std::array<std::string_view, 4> kSecret = {
    "credentials_set", "authorize_bash", "consume_bash_authorization", "record_bash_result"};

// Invalid UTF-8 becomes U+FFFD instead of an exception: previews must never
// make the audit write fail.
std::string dump_scalar(const Json& value, bool ensure_ascii) {
  return value.dump(-1, ' ', ensure_ascii, Json::error_handler_t::replace);
}

// Python's json.dumps layout, stopping once enough text exists for the cut:
// a 100 MB write_file body costs no more than a short one.
class PreviewWriter {
 public:
  explicit PreviewWriter(std::size_t chars) : chars_(chars), byte_budget_(4 * (chars + 1)) {}

  void write(const Json& value) {
    if (full()) return;
    switch (value.type()) {
      case Json::value_t::array: {
        out_ += '[';
        bool first = true;
        for (const Json& item : value) {
          if (full()) return;
          if (!first) out_ += ", ";
          first = false;
          write(item);
        }
        out_ += ']';
        return;
      }
      case Json::value_t::object: {
        out_ += '{';
        bool first = true;
        for (const auto& [key, item] : value.items()) {
          if (full()) return;
          if (!first) out_ += ", ";
          first = false;
          write_string(key);
          out_ += ": ";
          write(item);
        }
        out_ += '}';
        return;
      }
      case Json::value_t::string:
        write_string(value.get_ref<const std::string&>());
        return;
      default:
        out_ += dump_scalar(value, false);
        return;
    }
  }

  std::string take() { return std::string(utf8::prefix(out_, chars_)); }

 private:
  // Each UTF-8 character is at most 4 bytes, so this many bytes hold more
  // characters than the cut keeps.
  bool full() const { return out_.size() >= byte_budget_; }

  // Every input character yields at least one output character, so a prefix
  // one longer than the cut is enough.
  void write_string(std::string_view text) {
    out_ += dump_scalar(Json(std::string(utf8::prefix(text, chars_ + 1))), false);
  }

  std::size_t chars_;
  std::size_t byte_budget_;
  std::string out_;
};

const char* type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "int";
    case Json::value_t::number_float:
      return "float";
    case Json::value_t::binary:
      return "bytes";
    default:
      return "null";
  }
}

}  // namespace

bool is_derivable_method(std::string_view method) {
  for (std::string_view name : kDerivable) {
    if (name == method) return true;
  }
  return false;
}

bool is_secret_method(std::string_view method) {
  for (std::string_view name : kSecret) {
    if (name == method) return true;
  }
  return false;
}

namespace {

constexpr const char* kEllipsis = "\u2026";

// A copy of `value` with strings cut to `chars` code points, arrays and
// objects to `items` entries and nesting to kPreviewDepth; each cut is marked
// so a reader knows the preview is not the whole value.
Json pruned(const Json& value, std::size_t chars, std::size_t items, std::size_t depth) {
  if (depth >= kPreviewDepth && (value.is_array() || value.is_object())) return Json(kEllipsis);
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    std::string_view head = utf8::prefix(text, chars);
    if (head.size() == text.size()) return value;
    return Json(std::string(head) + kEllipsis);
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (std::size_t i = 0; i < value.size() && i < items; ++i) {
      out.push_back(pruned(value[i], chars, items, depth + 1));
    }
    if (value.size() > items) {
      out.push_back(std::string(kEllipsis) + "+" + std::to_string(value.size() - items));
    }
    return out;
  }
  if (value.is_object()) {
    Json out = Json::object();
    std::size_t kept = 0;
    for (const auto& [key, item] : value.items()) {
      if (kept == items) break;
      out[std::string(utf8::prefix(key, kPreviewKeyChars))] = pruned(item, chars, items, depth + 1);
      ++kept;
    }
    if (value.size() > kept) {
      out[kEllipsis] = "+" + std::to_string(value.size() - kept) + " keys";
    }
    return out;
  }
  return value;
}

// The layout of `value` if it fits the preview, else nullopt.
std::optional<std::string> fitting_layout(const Json& value) {
  PreviewWriter writer(kArgsPreviewChars + 1);
  writer.write(value);
  std::string text = writer.take();
  if (utf8::length(text) > kArgsPreviewChars) return std::nullopt;
  return text;
}

}  // namespace

std::string args_preview(const Json& args) {
  try {
    if (auto whole = fitting_layout(args)) return *whole;
    // Too long: cut values, never the document, so the preview stays JSON.
    // Tighter cuts until it fits; the last always does.
    static constexpr std::size_t kSchedule[][2] = {{240, 16}, {120, 8}, {60, 6},
                                                   {24, 4},   {8, 2},   {0, 1}};
    for (const auto& [chars, items] : kSchedule) {
      if (auto cut = fitting_layout(pruned(args, chars, items, 0))) return *cut;
    }
    return dump_scalar(Json(kEllipsis), false);
  } catch (const std::exception&) {
    return "<unserializable>";
  }
}

std::string canonical_json(const Json& value) {
  // nlohmann::json keeps objects in a std::map: keys are already sorted by
  // bytes, which for UTF-8 is code point order, as Python's sort_keys.
  return dump_scalar(value, true);
}

std::string result_preview(const Json& result) {
  OrderedJson shape;
  switch (result.type()) {
    case Json::value_t::object: {
      OrderedJson keys = OrderedJson::array();
      for (const auto& [key, item] : result.items()) {
        if (keys.size() == kPreviewKeys) break;
        keys.push_back(std::string(utf8::prefix(key, kPreviewKeyChars)));
      }
      shape = {{"type", "object"},
               {"keys", std::move(keys)},
               {"size", result.size()},
               {"error", result.contains("error")}};
      break;
    }
    case Json::value_t::array:
      shape = {{"type", "array"}, {"size", result.size()}};
      break;
    case Json::value_t::string:
      shape = {{"type", "string"}, {"length", utf8::length(result.get_ref<const std::string&>())}};
      break;
    default:
      shape = {{"type", type_name(result)}};
      break;
  }
  return shape.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace o4s::store::audit
