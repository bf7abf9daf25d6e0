// Shared by the sandbox integration tests: settings for a small enforced
// sandbox, a skip when this machine cannot run bubblewrap (with bubblewrap's
// diagnosis as the reason), and a launch of any command through a
// KernelSandbox the way the kernel manager does it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "proc/child_process.h"
#include "proc/supervisor.h"
#include "sandbox/facility.h"
#include "sandbox/kernel_sandbox.h"
#include "support/proc_helpers.h"

namespace o4s::sandbox::testing {

using namespace std::chrono_literals;

inline SandboxSettings small_sandbox() {
  SandboxSettings settings;
  settings.mode = SandboxMode::kEnforce;
  settings.tmpfs_bytes = 64ULL << 20;
  settings.limits.address_space_bytes = 1ULL << 30;
  settings.limits.processes = 64;
  settings.limits.file_size_bytes = 64ULL << 20;
  return settings;
}

// Skips the calling test when bubblewrap cannot sandbox here.
#define O4S_REQUIRE_BUBBLEWRAP()                                                               \
  do {                                                                                         \
    auto facility_ = ::o4s::sandbox::probe_facility(::o4s::sandbox::testing::small_sandbox()); \
    if (!facility_.available) {                                                                \
      GTEST_SKIP() << "bubblewrap cannot sandbox here: " << facility_.failure->message;        \
    }                                                                                          \
  } while (false)

// A command started through a KernelSandbox: the spawned launcher (bwrap or
// the command itself), its stdout, and what finish() established.
struct Launched {
  std::unique_ptr<proc::ChildProcess> launcher;
  UniqueFd stdin_write;
  UniqueFd stdout_read;
  std::shared_ptr<proc::StderrTail> stderr_tail;
};

inline Result<Launched> launch(KernelSandbox& box, const std::string& workspace,
                               const std::string& home, std::vector<std::string> argv) {
  LaunchSpec spec;
  spec.request.argv = std::move(argv);
  spec.request.env = {"PATH=/usr/bin:/bin", "HOME=" + home, "LC_ALL=C"};
  spec.request.cwd = workspace;
  spec.workspace = workspace;
  spec.runtime_paths = {spec.request.argv.front()};
  auto prepared = box.prepare(spec);
  if (!prepared) return std::move(prepared).error();
  auto spawned = proc::ProcessSupervisor::instance().spawn(prepared.value()->request(), 64 * 1024);
  if (!spawned) return std::move(spawned).error();
  Launched launched;
  launched.launcher = std::make_unique<proc::ChildProcess>(spawned->pid, std::move(spawned->pidfd));
  launched.stdin_write = std::move(spawned->stdin_write);
  launched.stdout_read = std::move(spawned->stdout_read);
  launched.stderr_tail = spawned->stderr_tail;
  proc::ChildProcess& child = *launched.launcher;
  auto tail = launched.stderr_tail;
  SpawnedLauncher handle{child.pid(), child.pidfd(), [&child, tail] {
                           child.wait_exit(1000ms);
                           ::o4s::testing::wait_until([&] { return tail->closed(); }, 500ms);
                           return tail->text();
                         }};
  auto outcome = prepared.value()->finish(handle);
  if (!outcome) return std::move(outcome).error();
  box.adopt(std::move(outcome.value()));
  return launched;
}

}  // namespace o4s::sandbox::testing
