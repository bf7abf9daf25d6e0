// A worker started ahead of its kernel: spawned in its sandbox, its
// interpreter up and its handshake done, waiting to be adopted by a
// KernelManager (a pool's fresh kernel, or a kernel's standby for its next
// restart). A warm worker serves exactly one kernel and is never returned
// to a pool once adopted.
//
// What must be unique per kernel is never shared: the attestation key is
// drawn fresh for each worker, and a warm worker is spawned with no
// authorization generation at all: the adopting kernel draws one at the
// claim and tells the worker in an adopt frame, so nothing the worker (or
// a process that read its environment) saw before the claim authorizes its
// bash. Kernel ids, frames and the dispatcher belong to the adopting kernel.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "kernel/sink_capture.h"
#include "kernel/transport.h"
#include "sandbox/kernel_sandbox.h"
#include "sandbox/launcher.h"

namespace o4s::kernel {

struct WarmWorker {
  std::shared_ptr<Transport> transport;
  // What it was started with: the adopting kernel's options must name the
  // same workspace and sandbox (the sandbox holds its pin and envelope).
  std::optional<std::string> workspace;
  std::shared_ptr<sandbox::KernelSandbox> sandbox;
  // A fresh kernel's R sink directory (bound into its sandbox at spawn).
  std::unique_ptr<SinkDirectory> sinks;
  // A standby's sandbox pin, held aside until it replaces the running
  // worker (the kernel's sandbox still signals the running one meanwhile).
  std::optional<sandbox::LaunchOutcome> pending_launch;
  // The workspace was made for this worker (a pool's): discard() removes it
  // if it is still empty. Never set for a kernel's own (a standby's).
  bool owns_workspace = false;

  bool alive() const { return transport && transport->alive(); }
  // Stops the worker (a pooled or standby worker nobody will use).
  void discard();
};

}  // namespace o4s::kernel
