// spawn_with_pipes against real processes (spec kernel.md §2.2, §2.3, §2.5):
// new session, signal dispositions and mask reset, no inherited host fds,
// exec failure as an error -- each through both starts: posix_spawn, and
// clone_exec (a request with limits or credentials).
#include "proc/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/pipe.h"
#include "base/unique_fd.h"
#include "proc/clone_exec.h"
#include "support/proc_helpers.h"

namespace o4s::proc {
namespace {

using namespace o4s::testing;

// Spawns, returns everything the child wrote to stdout, and its exit code.
struct Ran {
  std::string out;
  std::optional<int> code;
};

Ran run_through(const SpawnRequest& request) {
  auto spawned = spawn_with_pipes(request);
  if (!spawned) {
    ADD_FAILURE() << "spawn failed: " << spawned.error().message;
    return {};
  }
  auto child = adopt(spawned->pid);
  spawned->stdin_write.reset();
  Ran ran;
  ran.out = read_all_with_timeout(spawned->stdout_read.get(), 10s).value_or("<timeout>");
  ran.code = child->wait(10'000ms);
  return ran;
}

// Every test runs through posix_spawn and through clone_exec: a request with
// a limit (a core size of 0, harmless) takes the second path.
class SpawnTest : public ::testing::TestWithParam<bool> {
 protected:
  SpawnRequest shaped(SpawnRequest request) const {
    if (GetParam()) request.limits.push_back({RLIMIT_CORE, 0});
    return request;
  }
  Result<SpawnedPipes> spawn(const SpawnRequest& request) const {
    return spawn_with_pipes(shaped(request));
  }
  Ran run_to_end(const SpawnRequest& request) const { return run_through(shaped(request)); }
};

INSTANTIATE_TEST_SUITE_P(BothStarts, SpawnTest, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return std::string(param_info.param ? "CloneExec" : "PosixSpawn");
                         });

// Signals whose ignored disposition the spawn must reset (an ignored
// disposition survives exec; handled ones are reset by exec itself).
const int kMustReset[] = {SIGINT, SIGQUIT, SIGPIPE, SIGHUP, SIGTERM, SIGUSR1, SIGUSR2};

class IgnoredSignals {
 public:
  IgnoredSignals() {
    for (int sig : kMustReset) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      ::sigaction(sig, &ignore, &saved_[sig]);
    }
  }
  ~IgnoredSignals() {
    for (int sig : kMustReset) ::sigaction(sig, &saved_[sig], nullptr);
  }

 private:
  struct sigaction saved_[NSIG] {};
};

TEST_P(SpawnTest, ChildLeadsANewSessionAndGroup) {
  auto spawned = spawn(probe_request({"wait-stdin"}));
  ASSERT_TRUE(spawned.ok()) << spawned.error().message;
  auto child = adopt(spawned->pid);
  const pid_t pid = spawned->pid;
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_EQ(::getsid(pid), pid);
  EXPECT_NE(::getpgid(0), pid);
  EXPECT_NE(::getsid(0), pid);
  spawned->stdin_write.reset();
  EXPECT_EQ(child->wait(10'000ms), std::optional<int>(0));
}

TEST_P(SpawnTest, IgnoredSignalsAreResetToDefaultFromAnyThread) {
  IgnoredSignals ignored;
  // Spawning off the main thread must work the same (spec §2.5).
  Ran ran;
  std::thread([this, &ran] { ran = run_to_end(probe_request({"status"})); }).join();
  ASSERT_EQ(ran.code, std::optional<int>(0)) << ran.out;
  auto ignored_mask = status_mask(ran.out, "SigIgn");
  ASSERT_TRUE(ignored_mask.has_value()) << ran.out;
  for (int sig : kMustReset) EXPECT_FALSE(mask_has(*ignored_mask, sig)) << "signal " << sig;
  // The host's own dispositions are untouched.
  struct sigaction now {};
  ::sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
}

TEST_P(SpawnTest, ChildSignalMaskIsEmptyEvenWhenTheSpawningThreadBlocksSignals) {
  Ran ran;
  std::uint64_t spawner_mask = 0;
  std::thread([&] {
    sigset_t all;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
    // Confirm the precondition: this thread really blocks signals.
    std::ifstream in("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/status");
    std::stringstream text;
    text << in.rdbuf();
    spawner_mask = status_mask(text.str(), "SigBlk").value_or(0);
    ran = run_to_end(probe_request({"status"}));
  }).join();
  ASSERT_TRUE(mask_has(spawner_mask, SIGINT));
  ASSERT_EQ(ran.code, std::optional<int>(0)) << ran.out;
  EXPECT_EQ(status_mask(ran.out, "SigBlk"), std::optional<std::uint64_t>(0)) << ran.out;
}

TEST_P(SpawnTest, HostDescriptorsAreNotInherited) {
  // A descriptor some library leaked without O_CLOEXEC, and the test's own
  // close-on-exec ones: the child sees only its three pipes.
  UniqueFd leaked(::open("/dev/null", O_RDONLY));
  ASSERT_TRUE(leaked.valid());
  int raw[2];
  ASSERT_EQ(::pipe(raw), 0);  // no O_CLOEXEC either
  UniqueFd leaked_read(raw[0]);
  UniqueFd leaked_write(raw[1]);
  Ran ran = run_to_end(probe_request({"fds"}));
  ASSERT_EQ(ran.code, std::optional<int>(0));
  EXPECT_EQ(ran.out, "0 1 2 \n");
}

TEST_P(SpawnTest, PassedDescriptorKeepsItsNumberAndNothingElseLeaks) {
  // Leaked (non-CLOEXEC) descriptors numbered both below and above the
  // passed one: only the passed descriptor may reach the child (under
  // bubblewrap the child is a sandboxed cell).
  UniqueFd leaked_low(::open("/dev/null", O_RDONLY));
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  UniqueFd pass_read = std::move(pipe->read);
  UniqueFd pass_write = std::move(pipe->write);
  UniqueFd leaked_high(::open("/dev/null", O_RDONLY));
  UniqueFd other(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_LT(leaked_low.get(), pass_read.get());
  ASSERT_GT(leaked_high.get(), pass_read.get());
  SpawnRequest request = probe_request({"fds"});
  request.pass_fds = {pass_read.get()};
  Ran ran = run_to_end(request);
  ASSERT_EQ(ran.code, std::optional<int>(0));
  EXPECT_EQ(ran.out, "0 1 2 " + std::to_string(pass_read.get()) + " \n");
}

// A host started with its stdio closed hands out 0-2 for its own pipes;
// one of those passed at its own number would become the child's stdio.
TEST_P(SpawnTest, ADescriptorBelowThreeCannotBePassed) {
  SpawnRequest request = probe_request({"fds"});
  request.pass_fds = {1};
  auto refused = spawn(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("descriptor 1"), std::string::npos)
      << refused.error().message;
}

TEST_P(SpawnTest, ExecFailureIsAnErrorNotAnExit127) {
  SpawnRequest missing = probe_request({});
  missing.argv = {"/nonexistent/o4s-program", "arg"};
  auto failed = spawn(missing);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kSystem);
  EXPECT_EQ(failed.error().sys_errno, ENOENT);
  EXPECT_EQ(failed.error().message, "spawn /nonexistent/o4s-program: ENOENT");
}

TEST_P(SpawnTest, NonExecutableFileIsAnError) {
  TempDir dir;
  SpawnRequest request = probe_request({});
  request.argv = {dir.write_file("not-executable", "#!/bin/sh\nexit 0\n", 0644)};
  auto failed = spawn(request);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().sys_errno, EACCES);
}

TEST_P(SpawnTest, BareNameMissingFromPathIsNotRunFromTheWorkingDirectory) {
  // The child's cwd is the workspace, which cell code controls; a bare name
  // not found on PATH must fail as execvp would, never run ./name.
  TempDir workspace;
  workspace.write_file("o4s-cwd-trap", "#!/bin/sh\necho trapped\n", 0755);
  SpawnRequest request = probe_request({});
  request.argv = {"o4s-cwd-trap"};
  request.env = {"PATH=/nonexistent"};
  request.cwd = workspace.path();
  auto spawned = spawn(request);
  if (spawned.ok()) {
    auto child = adopt(spawned->pid);
    std::string out = read_all_with_timeout(spawned->stdout_read.get(), 10s).value_or("");
    child->wait(10'000ms);
    FAIL() << "ran the workspace's file; it printed: " << out;
  }
  EXPECT_EQ(spawned.error().sys_errno, ENOENT);
}

TEST_P(SpawnTest, EmptyArgvIsInvalid) {
  SpawnRequest request;
  auto failed = spawn(request);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidArgument);
}

TEST_P(SpawnTest, EnvironmentIsExactlyTheRequested) {
  SpawnRequest request;
  request.argv = {"env"};  // resolved against the child's PATH
  request.env = {"PATH=/usr/bin:/bin", "O4S_A=1", "O4S_B=x=y"};
  Ran ran = run_to_end(request);
  ASSERT_EQ(ran.code, std::optional<int>(0));
  EXPECT_EQ(ran.out, "PATH=/usr/bin:/bin\nO4S_A=1\nO4S_B=x=y\n");
}

TEST_P(SpawnTest, WorkingDirectoryIsApplied) {
  TempDir dir;
  SpawnRequest request = probe_request({"cwd"});
  request.cwd = dir.path();
  Ran ran = run_to_end(request);
  ASSERT_EQ(ran.code, std::optional<int>(0));
  EXPECT_EQ(ran.out, std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST_P(SpawnTest, PipesAreCloseOnExecInTheHost) {
  auto spawned = spawn(probe_request({"wait-stdin"}));
  ASSERT_TRUE(spawned.ok());
  auto child = adopt(spawned->pid);
  for (int fd : {spawned->stdin_write.get(), spawned->stdout_read.get(), spawned->stderr_read.get(),
                 child->pidfd()}) {
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC) << fd;
  }
  spawned->stdin_write.reset();
  EXPECT_EQ(child->wait(10'000ms), std::optional<int>(0));
}

// /proc/self/<file> as the child of `request` sees it.
std::string child_proc_file(SpawnRequest request, const std::string& file) {
  request.argv = {"/bin/cat", "/proc/self/" + file};
  request.env = {"PATH=/usr/bin:/bin"};
  Ran ran = run_through(request);
  EXPECT_EQ(ran.code, std::optional<int>(0)) << ran.out;
  return ran.out;
}

// The line of /proc/<pid>/status or /proc/<pid>/limits that starts with
// `key`, whitespace collapsed.
std::string line_of(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream words(line.substr(key.size()));
    std::string out;
    for (std::string word; words >> word;) out += (out.empty() ? "" : " ") + word;
    return out;
  }
  return "<no " + key + ">";
}

TEST(CloneExecTest, LimitsAreSetSoftAndHardBeforeExec) {
  SpawnRequest request;
  request.limits = {{RLIMIT_AS, 1ULL << 30}, {RLIMIT_CPU, 7}, {RLIMIT_FSIZE, 1ULL << 20}};
  std::string limits = child_proc_file(request, "limits");
  EXPECT_EQ(line_of(limits, "Max address space"), "1073741824 1073741824 bytes");
  EXPECT_EQ(line_of(limits, "Max cpu time"), "7 7 seconds");
  EXPECT_EQ(line_of(limits, "Max file size"), "1048576 1048576 bytes");
}

// A root daemon's sandbox child leaves root before it execs bubblewrap.
TEST(CloneExecTest, CredentialsDropEveryIdAndGroupBeforeExec) {
  if (::getuid() != 0) GTEST_SKIP() << "switching ids needs a root daemon";
  SpawnRequest request;
  request.credentials = ChildCredentials{65534, 65534};
  std::string status = child_proc_file(request, "status");
  EXPECT_EQ(line_of(status, "Uid:"), "65534 65534 65534 65534");
  EXPECT_EQ(line_of(status, "Gid:"), "65534 65534 65534 65534");
  EXPECT_EQ(line_of(status, "Groups:"), "");
  EXPECT_EQ(line_of(status, "CapEff:"), "0000000000000000");
  EXPECT_EQ(line_of(status, "CapPrm:"), "0000000000000000");
}

// A parent that keeps capabilities across setuid (PR_SET_KEEPCAPS, as
// SECBIT_KEEP_CAPS does) and holds inheritable ones would hand bubblewrap a
// non-root uid with root's capabilities: the child empties every set
// before it execs.
TEST(CloneExecTest, NoCapabilitySurvivesTheIdSwitchWhateverTheParentKept) {
  if (::getuid() != 0) GTEST_SKIP() << "switching ids needs a root daemon";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) ::_exit(2);
    struct {
      std::uint32_t version = 0x20080522;
      int pid = 0;
    } header;
    struct {
      std::uint32_t effective, permitted, inheritable;
    } sets[2] = {};
    if (::syscall(SYS_capget, &header, sets) != 0) ::_exit(3);
    for (auto& set : sets) set.inheritable = set.permitted;
    if (::syscall(SYS_capset, &header, sets) != 0) ::_exit(4);
    SpawnRequest request;
    request.credentials = ChildCredentials{65534, 65534};
    std::string status = child_proc_file(request, "status");
    for (const char* key : {"CapEff:", "CapPrm:", "CapInh:", "CapAmb:"}) {
      if (line_of(status, key) != "0000000000000000") ::_exit(5);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "5: a capability reached the exec'd child";
}

// glibc's setuid family would change the ids of every thread of the calling
// process; the child shares the daemon's memory, so it must make the raw
// system calls or the daemon's own threads would drop root (or worse, a
// thread of the daemon would end up with the sandbox's ids).
TEST(CloneExecTest, TheDaemonAndItsOtherThreadsKeepTheirIds) {
  if (::getuid() != 0) GTEST_SKIP() << "switching ids needs a root daemon";
  std::mutex mutex;
  std::condition_variable changed;
  bool spawned = false;
  pid_t other_tid = 0;
  std::thread other([&] {
    std::unique_lock lock(mutex);
    other_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    changed.notify_all();
    changed.wait(lock, [&] { return spawned; });
  });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return other_tid != 0; });
  }
  SpawnRequest request;
  request.credentials = ChildCredentials{65534, 65534};
  EXPECT_EQ(line_of(child_proc_file(request, "status"), "Uid:"), "65534 65534 65534 65534");
  std::ifstream in("/proc/self/task/" + std::to_string(other_tid) + "/status");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(line_of(text.str(), "Uid:"), "0 0 0 0");
  EXPECT_EQ(::getuid(), 0u);
  EXPECT_EQ(::geteuid(), 0u);
  {
    std::lock_guard lock(mutex);
    spawned = true;
  }
  changed.notify_all();
  other.join();
}

// The kernel resets the dumpable flag of the memory a task switching ids
// runs on, and the child shares the daemon's: without the restore a root
// daemon would lose core dumps and /proc access to itself after its first
// sandbox.
TEST(CloneExecTest, TheDaemonStaysDumpableAfterAChildDropsIds) {
  if (::getuid() != 0) GTEST_SKIP() << "switching ids needs a root daemon";
  ASSERT_EQ(::prctl(PR_GET_DUMPABLE), 1);
  SpawnRequest request;
  request.credentials = ChildCredentials{65534, 65534};
  EXPECT_EQ(line_of(child_proc_file(request, "status"), "Uid:"), "65534 65534 65534 65534");
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE), 1);
}

TEST(CloneExecTest, AFailedStepIsAnErrorNamingItAndLeavesNoChild) {
  SpawnRequest request = probe_request({"fds"});
  // Above fs.nr_open: the kernel refuses it even to root.
  request.limits = {{RLIMIT_NOFILE, 1ULL << 40}};
  auto failed = spawn_with_pipes(request);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().sys_errno, EPERM);
  EXPECT_NE(failed.error().message.find("(setrlimit)"), std::string::npos)
      << failed.error().message;
  // Reaped: no zombie child of this process remains.
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(CloneExecTest, TheProcListingClosesEveryDescriptorFromTheFirstUp) {
  // The child's path on kernels without close_range, tested directly in a
  // forked child: descriptors below `first` stay, every one from it goes,
  // however sparse the numbers.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (int fd : {40, 41, 100, 1000, 1001}) {
      if (::dup2(2, fd) != fd) ::_exit(2);
    }
    if (!close_listed_fds_from(41)) ::_exit(3);
    if (::fcntl(40, F_GETFD) < 0) ::_exit(4);
    for (int fd : {41, 100, 1000, 1001}) {
      if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) ::_exit(5);
    }
    if (::fcntl(2, F_GETFD) < 0) ::_exit(6);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace o4s::proc
