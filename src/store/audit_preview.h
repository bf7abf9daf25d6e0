// What the host-call audit log keeps of a call (spec host.md §7.4): short
// previews and a digest, never the full payloads. Pure functions, so the
// exact shapes are testable without a database.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace o4s::store::audit {

inline constexpr std::size_t kArgsPreviewChars = 500;
inline constexpr std::size_t kPreviewKeys = 64;
inline constexpr std::size_t kPreviewKeyChars = 80;
inline constexpr std::size_t kPreviewDepth = 8;
inline constexpr const char* kRedactedArgs = "<redacted secret args>";
inline constexpr const char* kRedactedResult = "<redacted secret-bearing result>";

// Derivable from other state: not logged at all.
bool is_derivable_method(std::string_view method);
// Their arguments or results carry secrets: previews redacted, no digest.
bool is_secret_method(std::string_view method);

// The args as Python's json.dumps writes them (", " and ": " separators,
// non-ASCII kept), at most 500 characters (code points, not bytes) and always
// a valid JSON document: past the bound, long strings, arrays and objects are
// cut and marked with U+2026, never the document itself.
std::string args_preview(const nlohmann::json& args);
// Sorted keys, compact separators, non-ASCII escaped: stable across runs.
std::string canonical_json(const nlohmann::json& value);
// The compact shape of a result: type, and size / keys / length.
std::string result_preview(const nlohmann::json& result);

}  // namespace o4s::store::audit
