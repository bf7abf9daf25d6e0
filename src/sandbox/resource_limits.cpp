#include "sandbox/resource_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/file_io.h"

namespace o4s::sandbox {

namespace {

struct Entry {
  __rlimit_resource resource;  // what glibc's prlimit takes in C++
  const char* name;
  const std::optional<std::uint64_t>& value;
};

std::vector<Entry> entries(const ResourceLimits& limits) {
  return {{RLIMIT_AS, "RLIMIT_AS", limits.address_space_bytes},
          {RLIMIT_CPU, "RLIMIT_CPU", limits.cpu_seconds},
          {RLIMIT_NPROC, "RLIMIT_NPROC", limits.processes},
          {RLIMIT_FSIZE, "RLIMIT_FSIZE", limits.file_size_bytes}};
}

}  // namespace

Status apply_limits(pid_t pid, const ResourceLimits& limits) {
  for (const auto& entry : entries(limits)) {
    if (!entry.value) continue;
    rlimit wanted{static_cast<rlim_t>(*entry.value), static_cast<rlim_t>(*entry.value)};
    rlimit old{};
    if (::prlimit(pid, entry.resource, nullptr, &old) != 0) {
      return system_error(std::string("prlimit ") + entry.name, errno);
    }
    // Never loosen a limit the daemon itself already runs under.
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < wanted.rlim_max) {
      wanted.rlim_max = old.rlim_max;
      wanted.rlim_cur = old.rlim_max;
    }
    if (::prlimit(pid, entry.resource, &wanted, nullptr) != 0) {
      return system_error(std::string("prlimit ") + entry.name, errno);
    }
  }
  return {};
}

// Read from /proc/<pid>/limits (world-readable): prlimit(2) on another
// uid's process needs CAP_SYS_RESOURCE, which a containerised root lacks.
Result<bool> limits_hold(pid_t pid, const ResourceLimits& limits) {
  auto read = read_file("/proc/" + std::to_string(pid) + "/limits");
  if (!read) return std::move(read).error();
  const std::string& text = read.value();
  const std::pair<const char*, const std::optional<std::uint64_t>*> rows[] = {
      {"Max address space", &limits.address_space_bytes},
      {"Max cpu time", &limits.cpu_seconds},
      {"Max processes", &limits.processes},
      {"Max file size", &limits.file_size_bytes}};
  for (const auto& [row, value] : rows) {
    if (!*value) continue;
    std::size_t at = text.find(row);
    if (at == std::string::npos) return false;
    unsigned long long soft = 0, hard = 0;
    // "Max cpu time   3   3   seconds"; "unlimited" fails the parse.
    if (std::sscanf(text.c_str() + at + std::strlen(row), " %llu %llu", &soft, &hard) != 2) {
      return false;
    }
    if (soft > **value || hard > **value) return false;
  }
  return true;
}

std::string describe_bytes(const std::optional<std::uint64_t>& bytes) {
  if (!bytes) return "unlimited";
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  constexpr double kMiB = 1024.0 * 1024.0;
  char text[64];
  double value = static_cast<double>(*bytes);
  if (value >= kGiB) {
    std::snprintf(text, sizeof text, "%.1f GiB", value / kGiB);
  } else if (value >= kMiB) {
    std::snprintf(text, sizeof text, "%.1f MiB", value / kMiB);
  } else {
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(*bytes));
  }
  return text;
}

}  // namespace o4s::sandbox
