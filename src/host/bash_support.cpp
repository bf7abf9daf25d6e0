#include "host/bash_support.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "base/random_id.h"
#include "base/sha256.h"
#include "base/utf8.h"
#include "host/precheck.h"

namespace o4s::host::bash {

namespace {

constexpr std::size_t kStdoutPreviewChars = 2000;
constexpr std::size_t kStderrPreviewChars = 1200;
constexpr std::size_t kMaxDiffPaths = 100;
constexpr std::size_t kMaxDiffPathChars = 500;

// An integer as Python's int() would read the worker's value: integers,
// finite floats (truncated) and decimal strings; anything else (bools
// included: they are never a count) is nullopt.
std::optional<std::int64_t> as_integer(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(number);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (!std::isfinite(number) || std::fabs(number) >= 9.2e18) return std::nullopt;
    return static_cast<std::int64_t>(number);
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long number = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str()) return std::nullopt;
    while (*end == ' ' || *end == '\t' || *end == '\n') ++end;
    if (*end != '\0') return std::nullopt;
    return static_cast<std::int64_t>(number);
  }
  return std::nullopt;
}

const Json& field(const Json& object, const char* key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string status_of(const Json& report) {
  const Json& status = field(report, "status");
  if (status.is_string()) {
    const std::string& text = status.get_ref<const std::string&>();
    if (text == "completed" || text == "timed_out" || text == "launch_failed" || text == "failed") {
      return text;
    }
  }
  return "failed";
}

Json stream_summary(const Json& report, const std::string& name, std::size_t preview_chars) {
  const Json& value = field(report, name.c_str());
  const std::string text = value.is_string() ? value.get<std::string>() : std::string();
  const auto retained = static_cast<std::int64_t>(utf8::length(text));
  const std::int64_t claimed =
      as_integer(field(report, (name + "_seen_chars").c_str())).value_or(0);
  const std::int64_t seen = std::max(retained, claimed);
  const std::int64_t dropped = std::max<std::int64_t>(0, seen - retained);
  return Json{{"chars", retained},
              {"sha256", sha256_hex(text)},
              {"preview", redact_secrets(text, preview_chars)},
              {"seen_chars", seen},
              {"retained_chars", retained},
              {"dropped_chars", dropped},
              {"truncated", dropped > 0}};
}

std::string safe_path(const std::string& path) {
  std::string_view trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.remove_suffix(1);
  const std::size_t slash = trimmed.rfind('/');
  const std::string_view base =
      slash == std::string_view::npos ? trimmed : trimmed.substr(slash + 1);
  if (is_secret_basename(base)) return "<secret-path>";
  return std::string(utf8::prefix(path, kMaxDiffPathChars));
}

Json diff_summary(const Json& report) {
  const Json& diff = field(report, "workspace_diff");
  const Json& claimed = field(diff, "truncated");
  bool truncated = claimed.is_boolean() && claimed.get<bool>();
  Json out = Json::object();
  for (const char* kind : {"created", "modified", "deleted"}) {
    Json paths = Json::array();
    const Json& listed = field(diff, kind);
    if (listed.is_array()) {
      for (const Json& path : listed) {
        if (!path.is_string()) continue;
        if (paths.size() == kMaxDiffPaths) {
          truncated = true;
          break;
        }
        paths.push_back(safe_path(path.get<std::string>()));
      }
    }
    out[kind] = std::move(paths);
  }
  out["truncated"] = truncated;
  return out;
}

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

}  // namespace

bool is_directory(const std::string& resolved) {
  struct stat info {};
  return ::stat(resolved.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string random_url_safe_token(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  fill_random(raw.data(), bytes);
  std::string out;
  out.reserve((bytes * 4 + 2) / 3);
  std::uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char byte : raw) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kBase64Url[(buffer >> bits) & 0x3FU]);
    }
  }
  if (bits > 0) out.push_back(kBase64Url[(buffer << (6 - bits)) & 0x3FU]);
  return out;
}

Json safe_record(const Json& capability, const Json& report) {
  const std::int64_t duration = as_integer(field(report, "duration_ms")).value_or(0);
  return Json{{"command_sha256", field(capability, "command_sha256")},
              {"command_category", field(capability, "category")},
              {"cwd", field(capability, "cwd")},
              {"generation", field(capability, "generation")},
              {"status", status_of(report)},
              {"exit_code", as_integer(field(report, "exit_code")).value_or(-1)},
              {"duration_ms", std::max<std::int64_t>(0, duration)},
              {"stdout", stream_summary(report, "stdout", kStdoutPreviewChars)},
              {"stderr", stream_summary(report, "stderr", kStderrPreviewChars)},
              {"workspace_diff", diff_summary(report)}};
}

}  // namespace o4s::host::bash
