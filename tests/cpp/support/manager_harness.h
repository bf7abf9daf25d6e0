// A KernelManager wired to a FakeTransport through a TransportFactory, with a
// FakeHooks embedder: the manager's state machine runs against scripted
// frames, no process involved.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "kernel/kernel_manager.h"
#include "support/fake_hooks.h"
#include "support/fake_transport.h"

namespace o4s::testing {

// The id every scripted cell uses, so frames can be pushed before execute().
inline constexpr const char* kCellId = "cell-1";

// A response id the fake transport replaces, when the frame is read, with the
// id of the last execute frame written (tests that let the manager pick the
// cell id cannot know it when they script the answer).
inline constexpr const char* kCurrentCell = "<current-cell>";

inline Json response_frame(const std::string& id = kCurrentCell) {
  return Json{{"type", "response"}, {"id", id},         {"stdout", ""},
              {"stderr", ""},       {"error", nullptr}, {"interrupted", false}};
}

struct ManagerHarness {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  std::shared_ptr<FakeHooks> hooks = std::make_shared<FakeHooks>();
  std::shared_ptr<FakeTransportFactory> factory = std::make_shared<FakeTransportFactory>(transport);
  kernel::KernelOptions options;
  std::unique_ptr<kernel::KernelManager> manager;

  kernel::KernelManager& make(std::shared_ptr<kernel::KernelHooks> with_hooks) {
    manager = std::make_unique<kernel::KernelManager>(options, std::move(with_hooks), factory);
    return *manager;
  }
  kernel::KernelManager& make() { return make(hooks); }

  // Built and started; the fake answers the handshake.
  kernel::KernelManager& started(std::shared_ptr<kernel::KernelHooks> with_hooks) {
    make(std::move(with_hooks));
    Status status = manager->start(5.0);
    EXPECT_TRUE(status.ok()) << (status.ok() ? "" : status.error().message);
    return *manager;
  }
  kernel::KernelManager& started() { return started(hooks); }

  Result<Json> execute(const std::string& code = "x", kernel::ChunkSink* sink = nullptr) {
    return manager->execute(code, "agent", std::string(kCellId), sink);
  }
};

}  // namespace o4s::testing
