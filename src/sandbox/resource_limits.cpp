#include "sandbox/resource_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

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

Result<bool> limits_hold(pid_t pid, const ResourceLimits& limits) {
  for (const auto& entry : entries(limits)) {
    if (!entry.value) continue;
    rlimit current{};
    if (::prlimit(pid, entry.resource, nullptr, &current) != 0) {
      return system_error(std::string("prlimit ") + entry.name, errno);
    }
    if (current.rlim_max == RLIM_INFINITY || current.rlim_max > *entry.value) return false;
    if (current.rlim_cur == RLIM_INFINITY || current.rlim_cur > *entry.value) return false;
  }
  return true;
}

bool nproc_limit_is_enforced_for_us() { return ::getuid() != 0; }

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
