#include "support/proc_helpers.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "proc/signals.h"

namespace o4s::testing {

using Clock = std::chrono::steady_clock;

std::string probe_path() { return O4S_PROBE; }
// Joined as literals: GCC 12 warns (-Warray-bounds, a false positive) on
// its own inlined std::string + "literal" at -O2.
std::string fake_worker_path() { return O4S_TESTPROGS_DIR "/fake_worker.py"; }
std::string silent_worker_path() { return O4S_TESTPROGS_DIR "/silent_worker.py"; }

proc::SpawnRequest probe_request(std::vector<std::string> args) {
  proc::SpawnRequest request;
  request.argv.push_back(probe_path());
  for (auto& arg : args) request.argv.push_back(std::move(arg));
  request.env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  return request;
}

std::unique_ptr<proc::ChildProcess> adopt(pid_t pid) {
  auto pidfd = proc::open_pidfd(pid);
  if (!pidfd) std::abort();
  return std::make_unique<proc::ChildProcess>(pid, std::move(pidfd.value()));
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(step);
  }
}

std::optional<char> process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "pid (comm) S ...": comm may contain spaces and parentheses, so take the
  // state after the last ')'.
  auto paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return std::nullopt;
  return text[paren + 2];
}

bool process_running(pid_t pid) {
  auto state = process_state(pid);
  return state && *state != 'Z' && *state != 'X';
}

namespace {

// Waits for readability until `deadline`; false on timeout.
bool wait_readable(int fd, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() < 0) return false;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

std::optional<std::string> read_line_with_timeout(int fd, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string line;
  for (;;) {
    if (!wait_readable(fd, deadline)) return std::nullopt;
    char c;
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    line.push_back(c);
  }
}

std::optional<std::string> read_all_with_timeout(int fd, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string out;
  char buffer[4096];
  for (;;) {
    if (!wait_readable(fd, deadline)) return std::nullopt;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

std::optional<std::uint64_t> status_mask(const std::string& status_text, const std::string& field) {
  std::istringstream in(status_text);
  std::string line;
  const std::string prefix = field + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    return std::stoull(line.substr(prefix.size()), nullptr, 16);
  }
  return std::nullopt;
}

}  // namespace o4s::testing
