// KernelSandbox with real bubblewrap: the mode decision, the pinned worker
// inside the PID namespace, the self-test, interrupts aimed at the worker's
// main thread, limits, and the group kill reaching into the sandbox.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "integration/sandbox/sandbox_fixture.h"
#include "sandbox/resource_limits.h"

namespace o4s::sandbox {
namespace {

using namespace o4s::testing;
using namespace o4s::sandbox::testing;

constexpr const char* kPython = "/usr/bin/python3";

// Prints "ready", then reports each SIGINT its main thread handles while
// helper threads (which could take a process-directed signal) sleep.
constexpr const char* kSleeper = R"(
import os, signal, sys, threading, time
def handler(signum, frame):
    # os.write: the signal may land while print() holds stdout's buffer.
    os.write(1, f"interrupted on {threading.current_thread().name}\n".encode())
signal.signal(signal.SIGINT, handler)
for _ in range(4):
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
print("ready", os.getpid(), flush=True)
while True:
    time.sleep(0.05)
)";

class BubblewrapLaunchTest : public ::testing::Test {
 protected:
  Result<Launched> start(KernelSandbox& box, std::vector<std::string> argv) {
    return launch(box, workspace_.path(), home_.path(), std::move(argv));
  }
  static std::string line(const Launched& launched) {
    return read_line_with_timeout(launched.stdout_read.get(), 10s).value_or("<timeout>");
  }
  static pid_t worker_pid(const KernelSandbox& box) {
    std::ifstream fdinfo("/proc/self/fdinfo/" + std::to_string(*box.worker_pidfd()));
    for (std::string text; std::getline(fdinfo, text);) {
      if (text.rfind("Pid:", 0) == 0) return static_cast<pid_t>(std::stol(text.substr(4)));
    }
    return -1;
  }

  TempDir workspace_;
  TempDir home_;
};

TEST_F(BubblewrapLaunchTest, ProvesThePinnedWorkerIsSandboxed) {
  O4S_REQUIRE_BUBBLEWRAP();
  KernelSandbox box(small_sandbox());
  auto launched = start(box, {kPython, "-c", kSleeper});
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  EXPECT_EQ(line(*launched), "ready 2") << "the worker is PID 2 of its own namespace";

  SandboxStatus status = box.status();
  EXPECT_EQ(status.state, "enabled");
  EXPECT_EQ(status.backend, "bubblewrap");
  EXPECT_TRUE(status.enforced);
  EXPECT_TRUE(status.self_test_passed);
  EXPECT_EQ(status.network_policy, "blocked");
  EXPECT_EQ(status.checks.size(), 12U);
  for (const auto& check : status.checks) EXPECT_TRUE(check.passed) << check.name;
  EXPECT_FALSE(status.process_limit.rfind("none", 0) == 0) << status.process_limit;

  // The pidfd names a host process that is not the spawned launcher but a
  // grandchild of it, in the launcher's process group.
  pid_t worker = worker_pid(box);
  ASSERT_GT(worker, 0);
  EXPECT_NE(worker, launched->launcher->pid());
  EXPECT_EQ(::getpgid(worker), launched->launcher->pid());
  // A root daemon's sandbox gets no RLIMIT_NPROC (its pids cgroup bounds it;
  // see BubblewrapLauncher::prepare).
  ResourceLimits expected = small_sandbox().limits;
  if (::getuid() == 0) expected.processes.reset();
  EXPECT_EQ(limits_hold(worker, expected).value(), true);
}

TEST_F(BubblewrapLaunchTest, InterruptsReachTheWorkersMainThreadEveryTime) {
  O4S_REQUIRE_BUBBLEWRAP();
  KernelSandbox box(small_sandbox());
  auto launched = start(box, {kPython, "-c", kSleeper});
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  ASSERT_EQ(line(*launched), "ready 2");
  for (int round = 0; round < 20; ++round) {
    auto sent = box.interrupt(SIGINT);
    ASSERT_TRUE(sent.has_value());
    EXPECT_TRUE(sent->delivered) << sent->gap.value_or("");
    EXPECT_EQ(line(*launched), "interrupted on MainThread") << "round " << round;
  }
  EXPECT_FALSE(launched->launcher->exited());
}

TEST_F(BubblewrapLaunchTest, AnExitedWorkerIsAGapNotASignalToAStranger) {
  O4S_REQUIRE_BUBBLEWRAP();
  KernelSandbox box(small_sandbox());
  auto launched = start(box, {kPython, "-c", "import sys; sys.stdin.read()"});
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  launched->stdin_write.reset();
  ASSERT_TRUE(launched->launcher->wait(5000ms).has_value());
  auto sent = box.interrupt(SIGINT);
  ASSERT_TRUE(sent.has_value());
  EXPECT_FALSE(sent->delivered);
  EXPECT_EQ(sent->gap, "the worker exited between being pinned and being signalled");
}

TEST_F(BubblewrapLaunchTest, TheWorkerSeesOnlyWhatItMay) {
  O4S_REQUIRE_BUBBLEWRAP();
  TempDir outside;
  std::string secret = outside.write_file("secret.txt", "host secret");
  std::ofstream(home_.file("id_rsa")) << "key";
  KernelSandbox box(small_sandbox());
  // The program waits for a line first: the self-test inspects the live
  // worker through /proc, and a program that has already exited (possible
  // under a loaded parallel ctest) would fail it for the wrong reason.
  auto launched = start(box, {kPython, "-c",
                              "import os, sys\n"
                              "sys.stdin.readline()\n"
                              "print(os.listdir(os.environ['HOME']))\n"
                              "print(os.path.exists(sys.argv[1]))\n"
                              "try:\n"
                              "    open('/usr/o4s-probe', 'w')\n"
                              "except OSError as e:\n"
                              "    print(e.strerror)\n"
                              "open('inside.txt', 'w').write('ok')\n"
                              "print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n",
                              secret});
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  ASSERT_EQ(::write(launched->stdin_write.get(), "\n", 1), 1);
  EXPECT_EQ(line(*launched), "[]");
  EXPECT_EQ(line(*launched), "False");
  EXPECT_EQ(line(*launched), "Read-only file system");
  EXPECT_EQ(line(*launched), "['1', '2']");
  // Generous: under a parallel ctest the VM's slow reaping of orphans can
  // hold the sandbox's exit for seconds; this is not a timing assertion.
  EXPECT_TRUE(launched->launcher->wait(20000ms).has_value());
  EXPECT_TRUE(std::filesystem::exists(workspace_.file("inside.txt")));
}

TEST_F(BubblewrapLaunchTest, KillingTheLaunchersGroupEndsEverythingInside) {
  O4S_REQUIRE_BUBBLEWRAP();
  KernelSandbox box(small_sandbox());
  auto launched = start(box, {kPython, "-c",
                              "import subprocess, os\n"
                              "subprocess.Popen(['/bin/sleep', '60'])\n"
                              "subprocess.Popen(['setsid', '/bin/sleep', '60'])\n"
                              "print('started', flush=True)\n"
                              "import time; time.sleep(60)\n"});
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  ASSERT_EQ(line(*launched), "started");
  pid_t worker = worker_pid(box);
  launched->launcher->kill_group();
  EXPECT_TRUE(launched->launcher->poll().has_value());
  EXPECT_TRUE(wait_until([&] { return !process_running(worker); }, 2000ms));
}

TEST_F(BubblewrapLaunchTest, AWorkspaceThatIsTheRootIsRefusedBeforeAnythingRuns) {
  O4S_REQUIRE_BUBBLEWRAP();
  KernelSandbox box(small_sandbox());
  LaunchSpec spec;
  spec.request.argv = {kPython, "-c", "pass"};
  spec.workspace = "/";
  auto prepared = box.prepare(spec);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().code, ErrorCode::kSandboxUnavailable);
  EXPECT_EQ(prepared.error().message,
            "the workspace / cannot be sandboxed: it is the filesystem root");
}

TEST(SandboxModeDecisionTest, EnforceWithoutBubblewrapIsAnActionableError) {
  SandboxSettings settings = small_sandbox();
  settings.bwrap = "/nonexistent/o4s-bwrap-enforce";
  KernelSandbox box(settings);
  TempDir workspace;
  LaunchSpec spec;
  spec.request.argv = {kPython, "-c", "pass"};
  spec.workspace = workspace.path();
  auto prepared = box.prepare(spec);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().code, ErrorCode::kSandboxUnavailable);
  EXPECT_EQ(prepared.error().message.rfind(
                "OPENAI4S_KERNEL_SANDBOX=enforce, but bubblewrap is not installed", 0),
            0U)
      << prepared.error().message;
}

TEST(SandboxModeDecisionTest, AutoWithoutBubblewrapRunsVisiblyDegraded) {
  SandboxSettings settings = small_sandbox();
  settings.mode = SandboxMode::kAuto;
  settings.bwrap = "/nonexistent/o4s-bwrap-auto";
  KernelSandbox box(settings);
  TempDir workspace;
  auto launched = launch(box, workspace.path(), workspace.path(), {kPython, "-c", "print(1)"});
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  SandboxStatus status = box.status();
  EXPECT_EQ(status.state, "unavailable");
  EXPECT_EQ(status.backend, "none");
  EXPECT_FALSE(status.enforced);
  EXPECT_EQ(status.reason, "bwrap_missing");
  EXPECT_EQ(status.warning.rfind("OPENAI4S SECURITY WARNING: OS kernel sandbox is not enforced; "
                                 "bubblewrap is not installed",
                                 0),
            0U);
  EXPECT_FALSE(box.worker_pidfd().has_value());
  EXPECT_FALSE(box.interrupt(SIGINT).has_value()) << "the caller signals its own child";
}

TEST(SandboxModeDecisionTest, OffNeverProbes) {
  SandboxSettings settings = small_sandbox();
  settings.mode = SandboxMode::kOff;
  settings.bwrap = "/nonexistent/o4s-bwrap-off";
  KernelSandbox box(settings);
  TempDir workspace;
  auto launched = launch(box, workspace.path(), workspace.path(), {kPython, "-c", "print(1)"});
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  SandboxStatus status = box.status();
  EXPECT_EQ(status.mode, "off");
  EXPECT_EQ(status.state, "disabled");
  EXPECT_TRUE(status.warning.empty());
}

}  // namespace
}  // namespace o4s::sandbox
