#include "host/env_install.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "base/deadline.h"
#include "base/paths.h"
#include "base/scope_exit.h"
#include "host/dispatcher.h"
#include "host/env_library.h"
#include "host/install_forwarder_data.h"
#include "host/install_network.h"
#include "proc/child_process.h"
#include "proc/supervisor.h"
#include "sandbox/bubblewrap_launcher.h"
#include "sandbox/facility.h"
#include "sandbox/seccomp_policy.h"

namespace o4s::host {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Kind = sandbox::FsOperation::Kind;

constexpr std::size_t kOutputTailBytes = 64 * 1024;
constexpr std::size_t kErrorLines = 24;
constexpr std::uint64_t kInstallTmpBytes = std::uint64_t{1} << 30;

// Reads `fd` to its end, keeping the last kOutputTailBytes; false when the
// deadline came first.
bool read_tail(int fd, Clock::time_point deadline, std::string& tail) {
  char buffer[8192];
  for (;;) {
    pollfd entry{fd, POLLIN, 0};
    int waited = static_cast<int>(std::min<long long>(left_until(deadline).count(), 1000));
    int ready = ::poll(&entry, 1, waited);
    if (ready == 0) {
      if (Clock::now() >= deadline) return false;
      continue;
    }
    if (ready < 0 && errno == EINTR) continue;
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
    tail.append(buffer, static_cast<std::size_t>(got));
    if (tail.size() > 2 * kOutputTailBytes) tail.erase(0, tail.size() - kOutputTailBytes);
  }
}

// The last few non-empty lines, without pip's root warning.
std::string last_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos &&
        line.find("Running pip as the 'root' user") == std::string::npos) {
      lines.push_back(std::move(line));
    }
    start = end + 1;
  }
  std::size_t from = lines.size() > kErrorLines ? lines.size() - kErrorLines : 0;
  std::string out;
  for (std::size_t i = from; i < lines.size(); ++i) out += (out.empty() ? "" : "\n") + lines[i];
  return out;
}

std::string settled(const proc::StderrTail& tail, Clock::time_point deadline) {
  // The supervisor thread drains stderr; give it a moment to see the end.
  while (!tail.closed() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(2));
  return tail.text();
}

Result<std::vector<std::string>> sandboxed_argv(const InstallRun& run,
                                                const InstallNetwork* network, int seccomp_fd) {
  auto bwrap = sandbox::resolve_bwrap("bwrap");
  if (!bwrap) {
    return make_error(ErrorCode::kSandboxUnavailable,
                      "installs run in a bubblewrap sandbox, and bwrap was not found");
  }
  sandbox::SandboxSettings settings;
  // Loopback only: the way out is the proxy's socket, bound below.
  settings.allow_raw_network = false;
  settings.tmpfs_bytes = kInstallTmpBytes;
  sandbox::HostReader reader{::geteuid(), {::getegid()}};
  sandbox::BwrapCommand command = sandbox::isolation_command(*bwrap, settings, reader);
  command.add({Kind::kBind, run.stage, run.stage, std::nullopt});
  for (const auto& dir : run.read_dirs) {
    auto resolved = real_path(dir);
    if (!resolved) {
      return make_error(
          ErrorCode::kInvalidArgument,
          "the package source " + dir + " is not reachable: " + resolved.error().message);
    }
    command.add({Kind::kReadOnlyBind, *resolved, *resolved, std::nullopt});
  }
  if (network != nullptr) {
    command.add({Kind::kReadOnlyBind, network->dir(), network->dir(), std::nullopt});
  }
  command.seccomp_fd(seccomp_fd).chdir(run.stage);
  return command.build(network != nullptr ? network->wrap(run.argv) : run.argv);
}

}  // namespace

Status run_installer(const InstallRun& run) {
  std::unique_ptr<InstallNetwork> network;
  if (!run.reach.empty()) {
    auto opened =
        InstallNetwork::open({run.reach, run.policy, run.max_bytes, run.deadline}, run.python);
    if (!opened) return std::move(opened).error();
    network = std::move(opened.value());
  }
  // Whatever the outcome, the audit learns what went over the wire.
  ScopeExit record([&] {
    if (network && run.connections != nullptr) *run.connections = network->finish();
  });
  auto seccomp = sandbox::seccomp_program_fd();
  if (!seccomp) return std::move(seccomp).error();
  auto argv = sandboxed_argv(run, network.get(), seccomp->get());
  if (!argv) return std::move(argv).error();
  proc::SpawnRequest request;
  request.argv = std::move(argv.value());
  request.env = run.env;
  request.cwd = "/";
  request.pass_fds = {seccomp->get()};
  auto spawned = proc::ProcessSupervisor::instance().spawn(request, kOutputTailBytes);
  seccomp->reset();
  if (!spawned) return std::move(spawned).error();
  proc::ChildProcess child(spawned->pid, std::move(spawned->pidfd));
  spawned->stdin_write.reset();
  std::string out;
  if (!read_tail(spawned->stdout_read.get(), run.deadline, out)) {
    child.kill_group();
    return make_error(ErrorCode::kTimeout,
                      "the install did not finish within its time budget "
                      "(OPENAI4S_ENV_TIMEOUT)");
  }
  auto code = child.wait(left_until(run.deadline) + milliseconds(100));
  if (!code) {
    child.kill_group();
    return make_error(ErrorCode::kTimeout,
                      "the install did not finish within its time budget "
                      "(OPENAI4S_ENV_TIMEOUT)");
  }
  if (*code == 0) return {};
  std::string text = out + "\n" + settled(*spawned->stderr_tail, Clock::now() + milliseconds(500));
  return make_error(
      ErrorCode::kInvalidArgument,
      "the installer failed (exit " + std::to_string(*code) + "):\n" + last_lines(text));
}

namespace {

std::vector<std::string> installer_env(const std::string& stage) {
  return {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
          "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1",
          // The target is a prefix of ours, never the system's.
          "PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1",
          "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "R_LIBS_USER=" + stage};
}

}  // namespace

Status reach_sources(InstallRun& run, const std::vector<std::string>& urls,
                     const EnvSources& sources, const HostSettings& settings) {
  // The source check's own policy (check_source_url): private addresses
  // open only with OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES.
  auto policy = make_egress_policy(settings.egress_mode, settings.egress_allow,
                                   sources.allow_private ? "0.0.0.0/0 ::/0" : "");
  if (!policy) return std::move(policy).error();
  run.policy = std::move(policy.value());
  run.max_bytes = sources.max_bytes;
  run.python = sources.python;
  run.reach.clear();
  for (auto& target : install_targets(urls)) {
    if (domain_basis(run.policy, target.host)) run.reach.push_back(std::move(target));
  }
  return {};
}

Status pip_install(const EnvSources& sources, const HostSettings& settings,
                   const std::string& prefix, const std::string& report,
                   const std::vector<std::string>& requirements, Clock::time_point deadline,
                   std::vector<ProxyConnection>* connections) {
  InstallRun run;
  run.stage = prefix;
  run.deadline = deadline;
  run.connections = connections;
  std::vector<std::string> urls;
  run.env = installer_env(prefix);
  // pip sees what the copied generation holds (and replaces it there, in
  // the stage) instead of installing a second copy beside it.
  if (std::string site = python_site_dir(prefix); !site.empty()) {
    run.env.push_back("PYTHONPATH=" + site);
  }
  run.argv = {sources.python, "-m", "pip", "install", "--quiet", "--prefix", prefix, "--report",
              report, "--no-warn-script-location",
              // An sdist builds with the system's setuptools, not a fresh
              // download of them.
              "--no-build-isolation"};
  if (sources.pip_index_url.empty()) {
    run.argv.push_back("--no-index");
  } else {
    run.argv.insert(run.argv.end(), {"--index-url", sources.pip_index_url});
    urls.push_back(sources.pip_index_url);
  }
  if (sources.any_url()) {
    // An unreachable source fails in seconds, not after pip's five retries.
    run.argv.insert(run.argv.end(), {"--retries", "1", "--timeout", "15"});
  }
  for (const auto& link : sources.find_links) {
    run.argv.insert(run.argv.end(), {"--find-links", link});
    if (is_url(link)) {
      urls.push_back(link);
    } else {
      run.read_dirs.push_back(link);
    }
  }
  if (Status ok = reach_sources(run, urls, sources, settings); !ok) return ok;
  if (!run.reach.empty()) {
    // Every URL through the proxy: https as CONNECT, http as a proxied request.
    run.argv.insert(run.argv.end(), {"--proxy", kInstallProxyToken});
  }
  // "--" ends pip's options: a requirement can never be read as one.
  run.argv.push_back("--");
  run.argv.insert(run.argv.end(), requirements.begin(), requirements.end());
  return run_installer(run);
}

Status r_install(const std::string& library, const std::vector<std::string>& tarballs,
                 const std::vector<std::string>& read_dirs, Clock::time_point deadline) {
  InstallRun run;
  run.stage = library;
  run.deadline = deadline;
  run.env = installer_env(library);
  run.read_dirs = read_dirs;
  run.argv = {"/usr/bin/R", "CMD", "INSTALL", "--no-test-load", "-l", library};
  run.argv.insert(run.argv.end(), tarballs.begin(), tarballs.end());
  return run_installer(run);
}

}  // namespace o4s::host
