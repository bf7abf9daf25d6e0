#include "host_hooks/process_usage.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "base/file_io.h"

namespace o4s::host_hooks {

namespace {

// The value after `key` in a procfs "Key:\tvalue" document.
std::optional<long long> field(const std::string& text, const std::string& key) {
  std::size_t at = text.find("\n" + key);
  if (at == std::string::npos) {
    if (text.rfind(key, 0) != 0) return std::nullopt;
    at = 0;
  } else {
    at += 1;
  }
  return std::strtoll(text.c_str() + at + key.size(), nullptr, 10);
}

}  // namespace

std::optional<ProcessUsage> process_usage(pid_t pid) {
  std::string base = "/proc/" + std::to_string(pid);
  auto stat = read_file(base + "/stat");
  auto status = read_file(base + "/status");
  if (!stat || !status) return std::nullopt;
  // The command name (field 2) may hold spaces and parentheses: the fields
  // that follow start after its last ')'.
  std::size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat->substr(close + 2));
  std::string skip;
  // Fields 3..13 (state .. cmajflt), then utime stime cutime cstime.
  for (int i = 3; i <= 13; ++i) rest >> skip;
  long long utime = 0, stime = 0, cutime = 0, cstime = 0;
  if (!(rest >> utime >> stime >> cutime >> cstime)) return std::nullopt;
  ProcessUsage usage;
  usage.cpu_s = static_cast<double>(utime + stime + cutime + cstime) /
                static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (auto hwm = field(status.value(), "VmHWM:")) {
    usage.peak_rss_bytes = static_cast<std::uint64_t>(*hwm) * 1024;
  }
  return usage;
}

std::optional<pid_t> pidfd_pid(int pidfd) {
  auto info = read_file("/proc/self/fdinfo/" + std::to_string(pidfd));
  if (!info) return std::nullopt;
  auto pid = field(info.value(), "Pid:");
  if (!pid || *pid <= 0) return std::nullopt;
  return static_cast<pid_t>(*pid);
}

}  // namespace o4s::host_hooks
