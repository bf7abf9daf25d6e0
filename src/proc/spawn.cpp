#include "proc/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "base/pipe.h"
#include "base/scope_exit.h"
#include "proc/clone_exec.h"

namespace o4s::proc {

namespace {

// Dispositions a shell or a Python parent commonly leaves ignored; an ignored
// disposition survives exec (handled ones are reset by exec itself). SIGINT
// and SIGQUIT matter most: R installs its interrupt handler only when SIGINT
// is not ignored. SIGPIPE is ignored by every CPython parent.
constexpr int kResetSignals[] = {SIGINT,  SIGQUIT, SIGPIPE, SIGXFSZ, SIGHUP,  SIGTERM,
                                 SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGCHLD};

// The child's descriptors, for both starts: the three pipe ends at 0, 1, 2,
// the passed ones at their own numbers, and nothing else.
struct DescriptorPlan {
  std::vector<std::pair<int, int>> dups;  // (from, to); from == to clears FD_CLOEXEC
  std::vector<int> closes;
  int close_from = 3;
};

DescriptorPlan plan_descriptors(int stdin_read, int stdout_write, int stderr_write,
                                const std::vector<int>& pass_fds) {
  DescriptorPlan plan;
  plan.dups = {{stdin_read, 0}, {stdout_write, 1}, {stderr_write, 2}};
  // dup2 onto itself clears FD_CLOEXEC (glibc's spawn, POSIX 2024).
  for (int fd : pass_fds) plan.dups.emplace_back(fd, fd);
  // Belt and braces against a library that leaked a non-CLOEXEC fd.
  if (pass_fds.empty()) return plan;
  // The same with descriptors to pass (Popen's close_fds=True): a
  // descriptor the host inherited without CLOEXEC from whoever started it
  // must not reach the child -- under bubblewrap, a sandboxed cell.
  // Every number below the highest passed one is closed, open or not, and
  // CLOEXEC or not: a snapshot of which are open would race with another
  // thread opening one, and glibc ignores a close of a closed descriptor.
  int highest = *std::max_element(pass_fds.begin(), pass_fds.end());
  for (int fd = 3; fd < highest; ++fd) {
    if (std::find(pass_fds.begin(), pass_fds.end(), fd) == pass_fds.end()) {
      plan.closes.push_back(fd);
    }
  }
  plan.close_from = highest + 1;
  return plan;
}

std::string env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return {};
}

}  // namespace

std::string resolve_program(const std::string& program, const std::vector<std::string>& env) {
  if (program.empty() || program.find('/') != std::string::npos) return program;
  std::string path = env_value(env, "PATH");
  if (path.empty()) path = "/bin:/usr/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t stop = path.find(':', start);
    if (stop == std::string::npos) stop = path.size();
    std::string dir = path.substr(start, stop - start);
    // An empty entry means the current directory; never search it implicitly.
    if (!dir.empty()) {
      std::string candidate = dir + "/" + program;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = stop + 1;
  }
  return program;
}

namespace {

// 0-2 become the child's pipes; a descriptor to pass there would be
// overwritten (a host started with its stdio closed hands out 0-2).
Status check_pass_fds(const std::vector<int>& pass_fds) {
  for (int fd : pass_fds) {
    if (fd < 3) {
      return make_error(ErrorCode::kInvalidArgument,
                        "spawn: descriptor " + std::to_string(fd) +
                            " cannot be passed at its own number (0-2 are the child's stdio); "
                            "start the host with stdin, stdout and stderr open");
    }
  }
  return {};
}

// What the child execs, built before any fork: the pointers borrow the
// request's strings.
struct ExecImage {
  std::string program;
  std::vector<char*> argv;
  std::vector<char*> envp;
  sigset_t default_signals;
};

std::vector<char*> null_terminated(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const auto& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

Result<ExecImage> exec_image(const SpawnRequest& request) {
  ExecImage image;
  image.program = resolve_program(request.argv[0], request.env);
  // Not found on PATH: fail as execvp would. posix_spawn would take the bare
  // name relative to the child's cwd (the workspace), i.e. run ./name.
  if (image.program.find('/') == std::string::npos) {
    return system_error("spawn " + image.program, ENOENT);
  }
  image.argv = null_terminated(request.argv);
  image.envp = null_terminated(request.env);
  sigemptyset(&image.default_signals);
  for (int sig : kResetSignals) sigaddset(&image.default_signals, sig);
  return image;
}

// Limits, credentials or a subreaper: our own clone, which sets them in the
// child.
Result<pid_t> start_cloned(const ExecImage& image, DescriptorPlan fds,
                           const SpawnRequest& request) {
  ChildPlan plan;
  plan.program = image.program.c_str();
  plan.argv = image.argv.data();
  plan.envp = image.envp.data();
  plan.dups = std::move(fds.dups);
  plan.closes = std::move(fds.closes);
  plan.close_from = fds.close_from;
  plan.cwd = request.cwd ? request.cwd->c_str() : nullptr;
  plan.default_signals = image.default_signals;
  plan.limits = request.limits;
  plan.credentials = request.credentials ? &*request.credentials : nullptr;
  plan.subreaper = request.subreaper;
  return clone_exec(plan);
}

Result<pid_t> start_spawned(const ExecImage& image, const DescriptorPlan& fds,
                            const SpawnRequest& request) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  ScopeExit free_actions([&] { posix_spawn_file_actions_destroy(&actions); });
  for (auto [from, to] : fds.dups) posix_spawn_file_actions_adddup2(&actions, from, to);
  for (int fd : fds.closes) posix_spawn_file_actions_addclose(&actions, fd);
  posix_spawn_file_actions_addclosefrom_np(&actions, fds.close_from);
  if (request.cwd) posix_spawn_file_actions_addchdir_np(&actions, request.cwd->c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  ScopeExit free_attr([&] { posix_spawnattr_destroy(&attr); });
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  posix_spawnattr_setsigdefault(&attr, &image.default_signals);
  // A host thread's blocked mask would otherwise be inherited across exec.
  posix_spawnattr_setsigmask(&attr, &empty_mask);
  posix_spawnattr_setflags(&attr, static_cast<short>(POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF |
                                                     POSIX_SPAWN_SETSIGMASK));
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, image.program.c_str(), &actions, &attr, image.argv.data(),
                         image.envp.data());
  if (rc != 0) return system_error("spawn " + image.program, rc);
  return pid;
}

}  // namespace

Result<SpawnedPipes> spawn_with_pipes(const SpawnRequest& request) {
  if (request.argv.empty()) return make_error(ErrorCode::kInvalidArgument, "spawn: empty argv");
  if (Status ok = check_pass_fds(request.pass_fds); !ok) return std::move(ok).error();
  auto in = make_pipe();
  if (!in) return std::move(in).error();
  auto out = make_pipe();
  if (!out) return std::move(out).error();
  auto err = make_pipe();
  if (!err) return std::move(err).error();
  // A sandboxed worker runs as another uid than the host, and R reaches its
  // request pipe by reopening /dev/fd/4, which checks the pipe's mode like a
  // file's. A pipe has no name: only a process that holds it, or may read
  // the holder's /proc/<pid>/fd (ptrace access), can open it, so letting
  // every uid through the mode gives nobody new a way in.
  for (const PipePair* pair : {&in.value(), &out.value()}) {
    (void)::fchmod(pair->read.get(), 0666);
  }

  DescriptorPlan fds =
      plan_descriptors(in->read.get(), out->write.get(), err->write.get(), request.pass_fds);
  auto image = exec_image(request);
  if (!image) return std::move(image).error();
  auto started = !request.limits.empty() || request.credentials || request.subreaper
                     ? start_cloned(*image, std::move(fds), request)
                     : start_spawned(*image, fds, request);
  if (!started) return std::move(started).error();
  return SpawnedPipes{started.value(), std::move(in->write), std::move(out->read),
                      std::move(err->read)};
}

}  // namespace o4s::proc
