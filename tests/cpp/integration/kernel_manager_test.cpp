// KernelManager with real worker processes: the fake worker
// (testprogs/fake_worker.py) speaks the protocol, PipeTransport and the
// supervisor carry it. Covers what only a real process shows: the worker's
// session and environment, interrupts by signal, death with a stderr tail,
// restart, and a kernel outliving the thread that created it.
#include "kernel/kernel_manager.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "support/fake_hooks.h"
#include "support/proc_helpers.h"

namespace o4s::kernel {
namespace {

using namespace o4s::testing;
using Clock = std::chrono::steady_clock;

constexpr double kInitTimeout = 20.0;

class KernelManagerIntegrationTest : public ::testing::Test {
 protected:
  KernelOptions options() const {
    KernelOptions o;
    o.python = "/usr/bin/python3";
    o.worker_script = fake_worker_path();
    o.cwd = workspace_.path();
    o.repo_root = repo_.path();
    return o;
  }
  std::unique_ptr<KernelManager> make(KernelOptions o) {
    return std::make_unique<KernelManager>(std::move(o), hooks_, nullptr);
  }
  std::unique_ptr<KernelManager> started() {
    auto manager = make(options());
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
  // A cell whose response stdout is a JSON document.
  static Json run_json(KernelManager& manager, const std::string& code) {
    Json response = run(manager, code);
    if (!response.is_object()) return Json();
    return Json::parse(response["stdout"].get<std::string>(), nullptr, false);
  }

  TempDir workspace_;
  TempDir repo_;
  std::shared_ptr<FakeHooks> hooks_ = std::make_shared<FakeHooks>();
};

TEST_F(KernelManagerIntegrationTest, ExecutesAndShutsDown) {
  auto manager = started();
  ASSERT_TRUE(manager->is_alive());
  RecordingSink sink;
  Json response = run(*manager, "echo h\xC3\xA9llo", &sink);
  EXPECT_EQ(response["stdout"], "h\xC3\xA9llo");
  EXPECT_EQ(sink.chunks, (std::vector<std::string>{"h\xC3\xA9llo"}));
  EXPECT_EQ(response["cwd"], workspace_.path());
  EXPECT_EQ(manager->stale_stdout_chunks(), 0U);

  const auto begin = Clock::now();
  manager->shutdown();
  EXPECT_LT(Clock::now() - begin, 2s) << "the worker reads the shutdown frame";
  EXPECT_FALSE(manager->is_alive());
}

TEST_F(KernelManagerIntegrationTest, HostCallsRoundTripThroughTheDispatcher) {
  hooks_->set_dispatcher([](const std::string& method, const Json& args) -> DispatchOutcome {
    if (method == "soft") return Json{{"error", "soft failure from host"}};
    if (method == "rows") return Json{{"error", "partial"}, {"rows", args}};
    return DispatchRaised{"unknown method " + method};
  });
  auto manager = started();
  EXPECT_EQ(run_json(*manager, "call soft []"),
            (Json{{"id", "hc-0-1"}, {"error", "soft failure from host"}}));
  EXPECT_EQ(run_json(*manager, "call rows [1,2]"),
            (Json{{"id", "hc-0-1"}, {"data", {{"error", "partial"}, {"rows", {1, 2}}}}}));
  EXPECT_EQ(run_json(*manager, "call nope []"),
            (Json{{"id", "hc-0-1"}, {"error", "unknown method nope"}}));
  ASSERT_EQ(hooks_->calls().size(), 3U);
  EXPECT_EQ(hooks_->calls()[0].authorization_generation, manager->authorization_generation());
}

TEST_F(KernelManagerIntegrationTest, WorkerLeadsItsOwnSession) {
  auto manager = started();
  Json ids = run_json(*manager, "ids");
  const auto pid = manager->transport()->local_pid();
  ASSERT_TRUE(pid.has_value());
  EXPECT_EQ(ids["pid"], *pid);
  EXPECT_EQ(ids["pgid"], *pid);
  EXPECT_EQ(ids["sid"], *pid);
  EXPECT_NE(ids["pgid"], ::getpgid(0));
}

TEST_F(KernelManagerIntegrationTest, WorkerEnvironmentIsBuiltFromTheAllowlist) {
  // Negative security test: secrets and injection variables in the host's
  // environment never reach the worker.
  ASSERT_EQ(::setenv("O4S_TEST_API_KEY", "sk-secret", 1), 0);
  ASSERT_EQ(::setenv("LD_O4S_TEST", "/tmp/evil.so", 1), 0);
  ASSERT_EQ(::setenv("HTTPS_PROXY", "http://user:pw@proxy", 1), 0);
  ASSERT_EQ(::setenv("PYTHONPATH", "/evil/site", 1), 0);
  auto manager = started();
  ::unsetenv("O4S_TEST_API_KEY");
  ::unsetenv("LD_O4S_TEST");
  ::unsetenv("HTTPS_PROXY");
  ::unsetenv("PYTHONPATH");

  EXPECT_EQ(run_json(*manager, "env O4S_TEST_API_KEY"), Json(nullptr));
  EXPECT_EQ(run_json(*manager, "env LD_O4S_TEST"), Json(nullptr));
  EXPECT_EQ(run_json(*manager, "env HTTPS_PROXY"), Json(nullptr));
  EXPECT_EQ(run_json(*manager, "env PYTHONPATH"),
            Json(std::filesystem::canonical(repo_.path()).string()));
  EXPECT_EQ(run_json(*manager, "env OPENAI4S_KERNEL_GENERATION"),
            Json(manager->authorization_generation()));
  EXPECT_EQ(run_json(*manager, "env OPENAI4S_KERNEL_MODE"), Json("repl"));
  EXPECT_EQ(run_json(*manager, "env OPENAI4S_WORKSPACE"),
            Json(std::filesystem::canonical(workspace_.path()).string()));
  // A Python worker's interpreter directory leads PATH.
  Json path = run_json(*manager, "env PATH");
  ASSERT_TRUE(path.is_string());
  EXPECT_EQ(path.get<std::string>().rfind("/usr/bin:", 0), 0U) << path;
}

TEST_F(KernelManagerIntegrationTest, InterruptFromInsideTheCellStopsIt) {
  auto manager = started();
  RecordingSink sink;
  std::optional<Result<InterruptDelivery>> delivery;
  // interrupt() never takes the transaction lock, so it may be called from
  // inside execute (here: the chunk callback on the executing thread).
  sink.on_text = [&](const std::string& text) {
    if (text == "sleeping\n") delivery.emplace(manager->interrupt());
  };
  Json response = run(*manager, "sleep", &sink);
  ASSERT_TRUE(delivery.has_value());
  ASSERT_TRUE(delivery->ok());
  EXPECT_TRUE(delivery->value().delivered);
  EXPECT_EQ(delivery->value().target, "local-process");
  EXPECT_EQ(response["error"], "Interrupted");
  EXPECT_EQ(response["interrupted"], true);
  // The kernel is still usable after the interrupt.
  EXPECT_EQ(run(*manager, "echo again")["stdout"], "again");
}

TEST_F(KernelManagerIntegrationTest, InspectVariables) {
  auto manager = started();
  auto result = manager->inspect_variables(5);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value()["limit"], 5);
  EXPECT_EQ(result.value()["variables"][0]["name"], "x");
}

TEST_F(KernelManagerIntegrationTest, DeathReportsTheStderrTailAndRestartRecovers) {
  auto manager = started();
  const std::string first_generation = manager->authorization_generation();
  auto died = manager->execute("die worker fell over", "agent", std::nullopt, nullptr);
  ASSERT_FALSE(died.ok());
  EXPECT_EQ(died.error().code, ErrorCode::kWorkerExited);
  EXPECT_EQ(died.error().message, "kernel worker exited unexpectedly: worker fell over");
  EXPECT_FALSE(manager->is_alive());
  auto refused = manager->execute("echo x", "agent", std::nullopt, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNotAlive);

  Status restarted = manager->restart(kInitTimeout);
  ASSERT_TRUE(restarted.ok()) << restarted.error().message;
  EXPECT_EQ(manager->generation(), 1);
  EXPECT_NE(manager->authorization_generation(), first_generation);
  // The new spawn carries the new generation in its environment.
  EXPECT_EQ(run_json(*manager, "env OPENAI4S_KERNEL_GENERATION"),
            Json(manager->authorization_generation()));
}

TEST_F(KernelManagerIntegrationTest, SilentDeathReportsTheExitStatus) {
  auto manager = started();
  auto died = manager->execute("die", "agent", std::nullopt, nullptr);
  ASSERT_FALSE(died.ok());
  EXPECT_EQ(died.error().code, ErrorCode::kWorkerExited);
  EXPECT_EQ(died.error().message, "kernel worker exited unexpectedly (exit status 3)");
  EXPECT_FALSE(manager->is_alive());
}

TEST_F(KernelManagerIntegrationTest, KernelOutlivesTheThreadThatCreatedIt) {
  // The fake worker arms PR_SET_PDEATHSIG (as bubblewrap's --die-with-parent
  // does); had the creating thread forked it, its exit would kill the worker.
  std::unique_ptr<KernelManager> manager;
  std::thread([&] { manager = started(); }).join();
  ASSERT_NE(manager, nullptr);
  ASSERT_TRUE(manager->is_alive());
  EXPECT_EQ(run(*manager, "echo still here")["stdout"], "still here");
}

TEST_F(KernelManagerIntegrationTest, KillWorkerEndsTheCellsGrandchildren) {
  auto manager = started();
  Json response = run(*manager, "grandchild");
  const pid_t grandchild = static_cast<pid_t>(std::stol(response["stdout"].get<std::string>()));
  ASSERT_TRUE(process_running(grandchild));
  manager->kill_worker();
  EXPECT_FALSE(manager->is_alive());
  EXPECT_TRUE(wait_until([&] { return !process_running(grandchild); }, 2000ms));
}

TEST_F(KernelManagerIntegrationTest, HandshakeDeadlineKillsASilentWorker) {
  KernelOptions o = options();
  o.worker_script = silent_worker_path();
  auto manager = make(o);
  const auto begin = Clock::now();
  Status status = manager->start(0.3);
  const auto elapsed = Clock::now() - begin;
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kHandshake);
  EXPECT_EQ(status.error().message,
            "kernel worker attestation initialization failed after 0.3s deadline");
  EXPECT_FALSE(manager->is_alive());
  EXPECT_LT(elapsed, 5s);
}

TEST_F(KernelManagerIntegrationTest, MissingInterpreterFailsToStart) {
  KernelOptions o = options();
  o.python = "/nonexistent/python3";
  auto manager = make(o);
  Status status = manager->start(kInitTimeout);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().sys_errno, ENOENT);
  EXPECT_FALSE(manager->is_alive());
}

}  // namespace
}  // namespace o4s::kernel
