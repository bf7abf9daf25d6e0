// KernelManager routed through a bubblewrap KernelSandbox, with the protocol-
// speaking fake worker: the handshake crosses the sandbox, interrupts target
// the pinned worker ("sandbox"), restart pins the new worker, and the group
// kill still ends a cell's grandchildren.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "integration/sandbox/sandbox_fixture.h"
#include "kernel/kernel_manager.h"
#include "support/fake_hooks.h"

namespace o4s::kernel {
namespace {

using namespace o4s::testing;
using namespace o4s::sandbox::testing;

constexpr double kInitTimeout = 20.0;

class SandboxedKernelTest : public ::testing::Test {
 protected:
  std::unique_ptr<KernelManager> started() {
    KernelOptions o;
    o.python = "/usr/bin/python3";
    o.worker_script = fake_worker_path();
    o.cwd = workspace_.path();
    o.repo_root = repo_.path();
    o.sandbox = std::make_shared<sandbox::KernelSandbox>(small_sandbox());
    box_ = o.sandbox;
    auto manager = std::make_unique<KernelManager>(std::move(o), hooks_, nullptr);
    Status status = manager->start(kInitTimeout);
    EXPECT_TRUE(status.ok()) << (status.ok() ? "" : status.error().message);
    return manager;
  }
  static Json run(KernelManager& manager, const std::string& code, ChunkSink* sink = nullptr) {
    auto result = manager.execute(code, "agent", std::nullopt, sink);
    if (!result.ok()) {
      ADD_FAILURE() << code << ": " << result.error().message;
      return Json();
    }
    return result.value();
  }
  pid_t pinned_worker() const {
    std::ifstream fdinfo("/proc/self/fdinfo/" + std::to_string(box_->worker_pidfd().value_or(-1)));
    for (std::string text; std::getline(fdinfo, text);) {
      if (text.rfind("Pid:", 0) == 0) return static_cast<pid_t>(std::stol(text.substr(4)));
    }
    return -1;
  }

  TempDir workspace_;
  TempDir repo_;
  std::shared_ptr<FakeHooks> hooks_ = std::make_shared<FakeHooks>();
  std::shared_ptr<sandbox::KernelSandbox> box_;
};

TEST_F(SandboxedKernelTest, TheHandshakeAndCellsCrossTheSandbox) {
  O4S_REQUIRE_BUBBLEWRAP();
  auto manager = started();
  ASSERT_TRUE(manager->is_alive());
  EXPECT_TRUE(box_->status().self_test_passed);
  Json ids = Json::parse(run(*manager, "ids")["stdout"].get<std::string>());
  EXPECT_EQ(ids["pid"], 2) << "namespace-local pid of the worker";
  EXPECT_EQ(run(*manager, "env TMPDIR")["stdout"], "\"/tmp\"");
  EXPECT_EQ(run(*manager, "echo fine")["stdout"], "fine");
  // The spawned process (bubblewrap) leads the group the worker is in.
  auto transport = manager->transport();
  ASSERT_TRUE(transport->local_pid().has_value());
  EXPECT_EQ(::getpgid(pinned_worker()), *transport->local_pid());
}

TEST_F(SandboxedKernelTest, InterruptsAreDeliveredByTheSandboxToThePinnedWorker) {
  O4S_REQUIRE_BUBBLEWRAP();
  auto manager = started();
  for (int round = 0; round < 5; ++round) {
    RecordingSink sink;
    std::optional<Result<InterruptDelivery>> delivery;
    sink.on_text = [&](const std::string& text) {
      if (text == "sleeping\n") delivery.emplace(manager->interrupt());
    };
    Json response = run(*manager, "sleep", &sink);
    ASSERT_TRUE(delivery.has_value() && delivery->ok());
    EXPECT_TRUE(delivery->value().delivered) << delivery->value().reason.value_or("");
    EXPECT_EQ(delivery->value().target, "sandbox");
    EXPECT_EQ(response["interrupted"], true) << "round " << round;
  }
  EXPECT_EQ(run(*manager, "echo again")["stdout"], "again");
}

TEST_F(SandboxedKernelTest, RestartPinsTheNewWorker) {
  O4S_REQUIRE_BUBBLEWRAP();
  auto manager = started();
  pid_t first = pinned_worker();
  ASSERT_TRUE(manager->restart(kInitTimeout).ok());
  pid_t second = pinned_worker();
  EXPECT_NE(first, second);
  EXPECT_GT(second, 0);
  EXPECT_TRUE(box_->status().self_test_passed);
  EXPECT_EQ(run(*manager, "echo restarted")["stdout"], "restarted");
}

TEST_F(SandboxedKernelTest, KillWorkerEndsTheSandboxAndTheCellsChildren) {
  O4S_REQUIRE_BUBBLEWRAP();
  auto manager = started();
  run(*manager, "grandchild");
  pid_t worker = pinned_worker();
  manager->kill_worker();
  EXPECT_FALSE(manager->is_alive());
  EXPECT_TRUE(wait_until([&] { return !process_running(worker); }, 2000ms));
  auto delivery = manager->interrupt();
  ASSERT_TRUE(delivery.ok());
  EXPECT_FALSE(delivery->delivered);
}

}  // namespace
}  // namespace o4s::kernel
