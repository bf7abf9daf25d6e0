#include <simdjson.h>

#include <cstdint>
#include <memory>

#include "proto/json_decoders.h"
#include "proto/limits.h"

namespace o4s::proto::detail {

namespace {

// simdjson sizes its buffers to the largest document it has parsed, at
// roughly ten bytes per input byte. A thread keeps one parser for ordinary
// frames; a bigger one gets a parser of its own that is freed right after,
// so one flood does not pin tens of megabytes in the host.
constexpr std::size_t kKeptCapacity = 256 * 1024;

// Each accessor is read through get() into a named value: simdjson's
// value_unsafe() on a temporary result would hand back a dangling reference.
//
// The reference stores an integer written without a minus sign as unsigned
// and one with it as signed; simdjson reads "-0" and "0" alike, so a zero in
// a document that spells "-0" anywhere is left to the reference.
struct Source {
  bool spells_negative_zero;
};

bool convert(const simdjson::dom::element& element, const Source& source, Json& out) {
  using simdjson::dom::element_type;
  switch (element.type()) {
    case element_type::NULL_VALUE:
      out = nullptr;
      return true;
    case element_type::BOOL: {
      bool value = false;
      if (element.get(value) != simdjson::SUCCESS) return false;
      out = value;
      return true;
    }
    case element_type::INT64: {
      std::int64_t value = 0;
      if (element.get(value) != simdjson::SUCCESS) return false;
      if (value == 0 && source.spells_negative_zero) return false;
      // Some handlers ask is_number_unsigned(), so the type must match.
      if (value >= 0) {
        out = static_cast<std::uint64_t>(value);
      } else {
        out = value;
      }
      return true;
    }
    case element_type::UINT64: {
      std::uint64_t value = 0;
      if (element.get(value) != simdjson::SUCCESS) return false;
      out = value;
      return true;
    }
    case element_type::DOUBLE: {
      double value = 0;
      if (element.get(value) != simdjson::SUCCESS) return false;
      out = value;
      return true;
    }
    case element_type::STRING: {
      std::string_view text;
      if (element.get(text) != simdjson::SUCCESS) return false;
      // The reference refuses what is not UTF-8 (a lone surrogate escape
      // decodes to such bytes); let it decide.
      if (!simdjson::validate_utf8(text.data(), text.size())) return false;
      out = std::string(text);
      return true;
    }
    case element_type::ARRAY: {
      simdjson::dom::array array;
      if (element.get(array) != simdjson::SUCCESS) return false;
      out = Json::array();
      auto& items = out.get_ref<Json::array_t&>();
      items.reserve(array.size());
      for (simdjson::dom::element item : array) {
        items.emplace_back();
        if (!convert(item, source, items.back())) return false;
      }
      return true;
    }
    case element_type::OBJECT: {
      simdjson::dom::object object;
      if (element.get(object) != simdjson::SUCCESS) return false;
      out = Json::object();
      auto& fields = out.get_ref<Json::object_t&>();
      for (simdjson::dom::key_value_pair field : object) {
        std::string_view key = field.key;
        if (!simdjson::validate_utf8(key.data(), key.size())) return false;
        // operator[] keeps the last of duplicate keys, as the reference does.
        if (!convert(field.value, source, fields[std::string(key)])) return false;
      }
      return true;
    }
  }
  return false;
}

std::optional<Json> parse_with(simdjson::dom::parser& parser, std::string_view text) {
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  Json out;
  const Source source{text.find("-0") != std::string_view::npos};
  if (!convert(root, source, out)) return std::nullopt;
  return out;
}

std::unique_ptr<simdjson::dom::parser> make_parser(std::size_t capacity) {
  auto parser = std::make_unique<simdjson::dom::parser>();
  // The nesting bound is the frame's; anything deeper goes to the reference,
  // which refuses it with the same words as before.
  if (parser->allocate(capacity, kMaxFrameDepth) != simdjson::SUCCESS) return nullptr;
  return parser;
}

}  // namespace

std::optional<Json> decode_fast(std::string_view text) {
  if (text.size() > kKeptCapacity) {
    auto parser = make_parser(text.size());
    if (!parser) return std::nullopt;
    return parse_with(*parser, text);
  }
  thread_local std::unique_ptr<simdjson::dom::parser> kept = make_parser(kKeptCapacity);
  if (!kept) return std::nullopt;
  return parse_with(*kept, text);
}

}  // namespace o4s::proto::detail
