#include "sandbox/facility.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "proc/child_process.h"
#include "proc/supervisor.h"
#include "sandbox/bubblewrap_launcher.h"
#include "sandbox/sandbox_identity.h"
#include "sandbox/seccomp_policy.h"

namespace o4s::sandbox {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The reference's self-test budget (spec kernel.md §2.13).
constexpr milliseconds kProbeTimeout(8000);
constexpr std::size_t kProbeStderrBytes = 16 * 1024;

// Everything until end of stream or the deadline.
std::string read_until_eof(int fd, Clock::time_point deadline) {
  std::string out;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return out;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return out;
    char buffer[512];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    if (out.size() < 4096) out.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string settled_text(const proc::StderrTail& tail, Clock::time_point deadline) {
  // The supervisor thread drains stderr; give it a moment to see the end.
  while (!tail.closed() && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  return tail.text();
}

Facility unavailable(std::string bwrap_path, Diagnosis diagnosis) {
  Facility facility;
  facility.bwrap_path = std::move(bwrap_path);
  facility.failure = std::move(diagnosis);
  return facility;
}

// One probe run, as `identity` when it drops root (the spawned child
// switches ids before it execs bubblewrap, as a kernel's launch does).
Facility probe_as(const SandboxSettings& settings, const std::string& bwrap_path,
                  const SandboxIdentity& identity) {
  BwrapCommand command = isolation_command(bwrap_path, settings, host_reader_of(identity));
  auto seccomp = seccomp_program_fd();
  if (!seccomp) {
    return unavailable(bwrap_path,
                       {FailureCause::kSeccompUnsupported,
                        "the seccomp policy could not be built: " + seccomp.error().message});
  }
  command.seccomp_fd(seccomp->get()).chdir("/");
  // bwrap itself is the probe's command: it is known to exist, exits at
  // once, and prints a line we can recognise.
  auto argv = command.build({bwrap_path, "--version"});
  if (!argv) return unavailable(bwrap_path, {FailureCause::kOther, argv.error().message});

  proc::SpawnRequest request;
  request.argv = std::move(argv.value());
  if (identity.dropped) request.credentials = proc::ChildCredentials{identity.uid, identity.gid};
  request.env = {"PATH=/usr/bin:/bin"};
  request.cwd = "/";
  request.pass_fds = {seccomp->get()};
  auto spawned = proc::ProcessSupervisor::instance().spawn(request, kProbeStderrBytes);
  seccomp->reset();
  if (!spawned) {
    return unavailable(bwrap_path, {FailureCause::kOther,
                                    "bubblewrap could not be started: " + spawned.error().message});
  }
  proc::ChildProcess child(spawned->pid, std::move(spawned->pidfd));
  spawned->stdin_write.reset();
  auto deadline = Clock::now() + kProbeTimeout;
  std::string out = read_until_eof(spawned->stdout_read.get(), deadline);
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  auto code = child.wait(std::max(left, milliseconds(0)));
  if (!code) {
    return unavailable(
        bwrap_path, {FailureCause::kOther, "bubblewrap did not finish its self-test within 8 s"});
  }
  if (*code == 0 && out.rfind("bubblewrap", 0) == 0) {
    Facility facility;
    facility.available = true;
    facility.bwrap_path = bwrap_path;
    facility.version = out.substr(0, out.find('\n'));
    return facility;
  }
  std::string text = settled_text(*spawned->stderr_tail, Clock::now() + milliseconds(500));
  return unavailable(bwrap_path, diagnose_bwrap_failure(text, *code, read_host_facts()));
}

Facility run_probe(const SandboxSettings& settings) {
  auto bwrap = resolve_bwrap(settings.bwrap);
  if (!bwrap) return unavailable("", bwrap_missing(settings.bwrap));
  // A root daemon's probe runs as nobody (or the fixed uid): it starts and
  // ends at once, and needs no lease of its own.
  SandboxIdentity own = choose_identity(settings, ::getuid(), ::getgid(), std::nullopt);
  if (!own.dropped) return probe_as(settings, *bwrap, own);

  Facility dropped = probe_as(settings, *bwrap, own);
  if (dropped.available) {
    dropped.drops_root = true;
    return dropped;
  }
  std::string problem = "bubblewrap does not start as uid " + std::to_string(own.uid) + ": " +
                        dropped.failure->message;
  // As root the sandbox still isolates, but its uid is the host's root:
  // kernels then run degraded (auto) or not at all (enforce, the self-test).
  SandboxIdentity as_root;
  Facility facility = probe_as(settings, *bwrap, as_root);
  facility.identity_problem = problem;
  return facility;
}

}  // namespace

std::optional<std::string> resolve_bwrap(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string resolved =
      proc::resolve_program(program, {std::string("PATH=") + (path != nullptr ? path : "")});
  if (resolved.find('/') == std::string::npos || ::access(resolved.c_str(), X_OK) != 0) {
    return std::nullopt;
  }
  return resolved;
}

Facility probe_facility(const SandboxSettings& settings) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, bool, std::optional<std::uint32_t>>, Facility> cache;
  std::lock_guard lock(mutex);
  auto key = std::make_tuple(settings.bwrap, settings.allow_raw_network, settings.sandbox_uid);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  Facility facility = run_probe(settings);
  cache.emplace(key, facility);
  return facility;
}

}  // namespace o4s::sandbox
