#include "sandbox/sandbox_settings.h"

#include <sys/sysinfo.h>

#include <algorithm>
#include <limits>

#include "base/ascii.h"

namespace o4s::sandbox {

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;

// Generous defaults: a science cell legitimately uses gigabytes and many
// threads (an OpenBLAS pool counts against the process limit, which Linux
// counts in threads), and a persistent kernel accumulates CPU time for days,
// so there is no default CPU limit.
constexpr std::uint64_t kDefaultProcesses = 1024;
constexpr std::uint64_t kDefaultFileSize = 8 * kGiB;
constexpr std::uint64_t kDefaultTmpfs = 1 * kGiB;
constexpr std::uint64_t kMinimumDefaultMemory = 1 * kGiB;

std::string trimmed_lower(std::string_view text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && ascii::is_space(text[begin])) ++begin;
  while (end > begin && ascii::is_space(text[end - 1])) --end;
  return ascii::lowered(text.substr(begin, end - begin));
}

std::optional<std::string> lookup(const EnvironmentMap& env, const char* name) {
  auto found = env.find(name);
  if (found == env.end()) return std::nullopt;
  return found->second;
}

Error invalid(const char* name, const std::string& value, const std::string& expected) {
  return make_error(ErrorCode::kInvalidArgument,
                    std::string(name) + " must be " + expected + " (got '" + value + "')");
}

// A limit variable: absent or empty keeps the default.
Result<std::optional<std::uint64_t>> limit_from(const EnvironmentMap& env, const char* name,
                                                std::optional<std::uint64_t> fallback,
                                                bool is_size) {
  auto value = lookup(env, name);
  if (!value || trimmed_lower(*value).empty()) return fallback;
  auto parsed = parse_size(*value);
  if (!parsed) {
    return invalid(name, *value,
                   is_size ? "a size such as 4G, 512M or none" : "a whole number or none");
  }
  if (!is_size && parsed.value() &&
      trimmed_lower(*value).find_first_not_of("0123456789") != std::string::npos) {
    return invalid(name, *value, "a whole number or none");
  }
  if (parsed.value() && *parsed.value() == 0) return invalid(name, *value, "greater than zero");
  return parsed.value();
}

// A host id for the sandbox: a whole number, never 0 (root is what the
// setting exists to avoid) and never the "no id" value -1.
Result<std::optional<std::uint32_t>> id_from(const EnvironmentMap& env, const char* name) {
  auto value = lookup(env, name);
  if (!value || trimmed_lower(*value).empty()) return std::optional<std::uint32_t>();
  std::string text = trimmed_lower(*value);
  if (text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) {
    return invalid(name, *value, "a numeric host id");
  }
  std::uint64_t id = std::stoull(text);
  if (id == 0 || id >= 0xffffffffULL) return invalid(name, *value, "a non-root numeric host id");
  return std::optional<std::uint32_t>(static_cast<std::uint32_t>(id));
}

Result<bool> flag_from(const EnvironmentMap& env, const char* name) {
  auto value = lookup(env, name);
  if (!value) return false;
  std::string text = trimmed_lower(*value);
  if (text.empty() || text == "0" || text == "false" || text == "no" || text == "off") return false;
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  return invalid(name, *value, "1/true/yes/on or 0/false/no/off");
}

Result<std::vector<std::string>> paths_from(const EnvironmentMap& env, const char* name) {
  std::vector<std::string> paths;
  auto value = lookup(env, name);
  if (!value) return paths;
  std::size_t start = 0;
  while (start <= value->size()) {
    std::size_t stop = value->find(':', start);
    if (stop == std::string::npos) stop = value->size();
    std::string path = value->substr(start, stop - start);
    if (!path.empty()) {
      if (path.front() != '/') return invalid(name, *value, "absolute paths separated by ':'");
      paths.push_back(std::move(path));
    }
    start = stop + 1;
  }
  return paths;
}

}  // namespace

std::string_view mode_name(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kAuto:
      return "auto";
    case SandboxMode::kEnforce:
      return "enforce";
    case SandboxMode::kOff:
      return "off";
  }
  return "auto";
}

Result<SandboxMode> parse_mode(std::string_view text) {
  std::string mode = trimmed_lower(text);
  if (mode.empty() || mode == "auto") return SandboxMode::kAuto;
  if (mode == "enforce") return SandboxMode::kEnforce;
  if (mode == "off") return SandboxMode::kOff;
  return invalid("OPENAI4S_KERNEL_SANDBOX", std::string(text), "auto, enforce or off");
}

Result<std::optional<std::uint64_t>> parse_size(std::string_view text) {
  std::string value = trimmed_lower(text);
  if (value == "none" || value == "unlimited") return std::optional<std::uint64_t>();
  if (value.empty()) return make_error(ErrorCode::kInvalidArgument, "empty size");
  std::uint64_t multiplier = 1;
  switch (value.back()) {
    case 'k':
      multiplier = kKiB;
      break;
    case 'm':
      multiplier = kMiB;
      break;
    case 'g':
      multiplier = kGiB;
      break;
    case 't':
      multiplier = kGiB * 1024;
      break;
    default:
      break;
  }
  if (multiplier != 1) value.pop_back();
  if (value.empty() || value.size() > 19 ||
      value.find_first_not_of("0123456789") != std::string::npos) {
    return make_error(ErrorCode::kInvalidArgument, "not a size: " + std::string(text));
  }
  std::uint64_t number = std::stoull(value);
  if (number > std::numeric_limits<std::uint64_t>::max() / multiplier) {
    return make_error(ErrorCode::kInvalidArgument, "size out of range: " + std::string(text));
  }
  return std::optional<std::uint64_t>(number * multiplier);
}

std::uint64_t physical_memory_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return 0;
  return static_cast<std::uint64_t>(info.totalram) * info.mem_unit;
}

Result<SandboxSettings> settings_from_environment(const EnvironmentMap& env,
                                                  std::uint64_t physical_memory) {
  SandboxSettings settings;
  auto mode = parse_mode(lookup(env, "OPENAI4S_KERNEL_SANDBOX").value_or(""));
  if (!mode) return std::move(mode).error();
  settings.mode = mode.value();

  auto raw_network = flag_from(env, "OPENAI4S_KERNEL_ALLOW_RAW_NETWORK");
  if (!raw_network) return std::move(raw_network).error();
  settings.allow_raw_network = raw_network.value();

  // Half the machine leaves the host (and a second kernel) room to breathe
  // when a cell allocates until refused.
  std::uint64_t memory = std::max(physical_memory / 2, kMinimumDefaultMemory);
  auto address_space = limit_from(env, "OPENAI4S_KERNEL_MEMORY_LIMIT", memory, true);
  if (!address_space) return std::move(address_space).error();
  settings.limits.address_space_bytes = address_space.value();
  auto cpu = limit_from(env, "OPENAI4S_KERNEL_CPU_LIMIT", std::nullopt, false);
  if (!cpu) return std::move(cpu).error();
  settings.limits.cpu_seconds = cpu.value();
  auto processes = limit_from(env, "OPENAI4S_KERNEL_PROCESS_LIMIT", kDefaultProcesses, false);
  if (!processes) return std::move(processes).error();
  settings.limits.processes = processes.value();
  auto file_size = limit_from(env, "OPENAI4S_KERNEL_FILE_SIZE_LIMIT", kDefaultFileSize, true);
  if (!file_size) return std::move(file_size).error();
  settings.limits.file_size_bytes = file_size.value();

  auto tmpfs = limit_from(env, "OPENAI4S_KERNEL_TMP_SIZE", kDefaultTmpfs, true);
  if (!tmpfs) return std::move(tmpfs).error();
  if (!tmpfs.value()) {
    return invalid("OPENAI4S_KERNEL_TMP_SIZE", "none", "a size: a tmpfs is memory");
  }
  settings.tmpfs_bytes = *tmpfs.value();

  auto read_paths = paths_from(env, "OPENAI4S_KERNEL_SANDBOX_READ_PATHS");
  if (!read_paths) return std::move(read_paths).error();
  settings.extra_read_paths = std::move(read_paths.value());

  if (auto bwrap = lookup(env, "OPENAI4S_KERNEL_BWRAP"); bwrap && !bwrap->empty()) {
    settings.bwrap = *bwrap;
  }
  auto uid = id_from(env, "OPENAI4S_SANDBOX_UID");
  if (!uid) return std::move(uid).error();
  settings.sandbox_uid = uid.value();
  auto gid = id_from(env, "OPENAI4S_SANDBOX_GID");
  if (!gid) return std::move(gid).error();
  settings.sandbox_gid = gid.value();
  if (auto range = lookup(env, "OPENAI4S_SANDBOX_UID_RANGE"); range && !range->empty()) {
    auto parsed = parse_uid_range(*range);
    if (!parsed) return std::move(parsed).error();
    settings.uid_range = parsed.value();
  }
  if (auto run_dir = lookup(env, "OPENAI4S_SANDBOX_RUN_DIR"); run_dir && !run_dir->empty()) {
    if (!run_dir->starts_with("/")) {
      return invalid("OPENAI4S_SANDBOX_RUN_DIR", *run_dir, "an absolute path");
    }
    settings.uid_run_directory = *run_dir;
  }
  return settings;
}

}  // namespace o4s::sandbox
