// Manager lifecycle with a factory-made (remote-like) transport: interrupt,
// restart refusal, kill_worker, shutdown (spec kernel.md §5.8-§5.11).
#include <gtest/gtest.h>

#include "support/manager_harness.h"

namespace o4s::kernel {
namespace {

using o4s::testing::ManagerHarness;

TEST(LifecycleTest, RemoteInterruptGoesThroughTheTransport) {
  ManagerHarness h;
  h.started();
  auto delivery = h.manager->interrupt();
  ASSERT_TRUE(delivery.ok());
  EXPECT_TRUE(delivery.value().delivered);
  EXPECT_EQ(delivery.value().target, "transport");
  EXPECT_FALSE(delivery.value().reason.has_value());
}

// kernel/cell_interrupts.h: the worker learns which cell an interrupt was
// for, once per cell, before the signal (or before the cell itself).
TEST(LifecycleTest, AnInterruptKeptForACellOnItsWayPrecedesItsExecuteFrame) {
  ManagerHarness h;
  h.started();
  ASSERT_TRUE(h.manager->interrupt(/*for_next_cell=*/true).ok());
  EXPECT_TRUE(h.transport->written_frames_of_type("interrupt").empty());
  h.transport->push_frame(o4s::testing::response_frame());
  ASSERT_TRUE(
      h.manager->execute("1+1", "system", std::string(o4s::testing::kCellId), nullptr).ok());
  std::vector<Json> types;
  for (const Json& frame : h.transport->written_frames()) {
    if (frame.value("type", "") == "interrupt" || frame.value("type", "") == "execute") {
      types.push_back(frame);
    }
  }
  ASSERT_EQ(types.size(), 2U);
  EXPECT_EQ(types[0], (Json{{"type", "interrupt"}, {"seq", 1}}));
  EXPECT_EQ(types[1]["seq"], 1);
  // Spent by that cell: the next one runs uninterrupted.
  h.transport->push_frame(o4s::testing::response_frame());
  ASSERT_TRUE(
      h.manager->execute("1+1", "system", std::string(o4s::testing::kCellId), nullptr).ok());
  EXPECT_EQ(h.transport->written_frames_of_type("interrupt").size(), 1U);
}

TEST(LifecycleTest, AnIdleInterruptSendsNoFrame) {
  ManagerHarness h;
  h.started();
  ASSERT_TRUE(h.manager->interrupt().ok());
  h.transport->push_frame(o4s::testing::response_frame());
  ASSERT_TRUE(
      h.manager->execute("1+1", "system", std::string(o4s::testing::kCellId), nullptr).ok());
  EXPECT_TRUE(h.transport->written_frames_of_type("interrupt").empty());
}

TEST(LifecycleTest, RemoteWithoutAnInterruptPathIsUnsupported) {
  ManagerHarness h;
  h.started();
  h.transport->set_interrupt_result(false);
  auto delivery = h.manager->interrupt();
  ASSERT_FALSE(delivery.ok());
  EXPECT_EQ(delivery.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(delivery.error().message,
            "no way to interrupt this worker: it is remote and no signal delivery was "
            "configured for its allocation");
}

TEST(LifecycleTest, InterruptWithoutAWorker) {
  ManagerHarness h;
  h.make();
  auto delivery = h.manager->interrupt();
  ASSERT_TRUE(delivery.ok());
  EXPECT_FALSE(delivery.value().delivered);
}

TEST(LifecycleTest, RestartIsRefusedForAFactoryKernelBeforeTearingDown) {
  ManagerHarness h;
  h.started();
  const std::string generation = h.manager->authorization_generation();
  Status status = h.manager->restart(5.0);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(status.error().message.rfind("this worker cannot be respawned in place", 0), 0U);
  EXPECT_EQ(h.transport->close_calls(), 0);
  EXPECT_EQ(h.factory->calls(), 1);
  EXPECT_EQ(h.manager->generation(), 0);
  EXPECT_EQ(h.manager->authorization_generation(), generation);
  EXPECT_TRUE(h.manager->is_alive());
}

TEST(LifecycleTest, AuthorizationGenerationIsFreshPerManager) {
  ManagerHarness a;
  ManagerHarness b;
  a.make();
  b.make();
  EXPECT_EQ(a.manager->authorization_generation().rfind("kernel:", 0), 0U);
  EXPECT_NE(a.manager->authorization_generation(), b.manager->authorization_generation());
}

TEST(LifecycleTest, KillWorkerKillsTheTransport) {
  ManagerHarness h;
  h.started();
  h.manager->kill_worker();
  EXPECT_EQ(h.transport->kill_calls(), 1);
  EXPECT_FALSE(h.manager->is_alive());
}

TEST(LifecycleTest, ShutdownClosesGracefullyAndDestructionShutsDown) {
  ManagerHarness h;
  h.started();
  h.manager->shutdown();
  EXPECT_EQ(h.transport->close_calls(), 1);
  EXPECT_EQ(h.transport->last_close_graceful(), std::optional<bool>(true));
  h.manager.reset();
  EXPECT_EQ(h.transport->close_calls(), 2);
}

TEST(LifecycleTest, ManagerReportsItsFactory) {
  ManagerHarness h;
  h.make();
  EXPECT_TRUE(h.manager->uses_factory());
  EXPECT_EQ(h.manager->transport(), nullptr);
  ASSERT_TRUE(h.manager->start(5.0).ok());
  EXPECT_EQ(h.manager->transport(), h.transport);
}

TEST(ChildEnvironmentRequestTest, PythonWorkerInterpreterLeadsArgvWorkerDoesNot) {
  KernelOptions options;
  options.python = "/opt/venv/bin/python";
  options.mode = "pipeline";
  options.cwd = "/work";
  options.repo_root = "/src/root";
  options.env_root = "/opt/conda";
  options.env_name = "sci";
  EnvironmentRequest request = child_environment_request(options, "kernel:g1", {{"A", "1"}});
  EXPECT_EQ(request.interpreter, std::optional<std::string>("/opt/venv/bin/python"));
  EXPECT_EQ(request.kernel_generation, std::optional<std::string>("kernel:g1"));
  EXPECT_EQ(request.mode, "pipeline");
  EXPECT_EQ(request.cwd, std::optional<std::string>("/work"));
  EXPECT_EQ(request.repo_root, std::optional<std::string>("/src/root"));
  EXPECT_EQ(request.env_root, std::optional<std::string>("/opt/conda"));
  EXPECT_EQ(request.env_name, std::optional<std::string>("sci"));
  EXPECT_EQ(request.source.at("A"), "1");

  options.argv = std::vector<std::string>{"Rscript", "worker.R"};
  EXPECT_FALSE(child_environment_request(options, "kernel:g1", {}).interpreter.has_value());
}

}  // namespace
}  // namespace o4s::kernel
