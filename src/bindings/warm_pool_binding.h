// The warm pool across the Python edge (issue 28): `_core.WarmPoolCore`
// keeps started workers, each in a fresh workspace under a root, and hands
// them out as `_core.WarmWorker` handles a KernelCore adopts.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>

#include "base/result.h"
#include "kernel/kernel_manager.h"
#include "kernel/warm_worker.h"
#include "sandbox/sandbox_settings.h"

namespace o4s::bindings {

namespace py = pybind11;

// One claimed worker until a KernelCore adopts it (then empty); dropped
// unadopted, its worker is stopped.
struct WarmWorkerHandle {
  std::optional<kernel::WarmWorker> worker;
  ~WarmWorkerHandle();
};

// The options the Python Kernel's arguments spell (kernel_core.cpp).
kernel::KernelOptions make_options(py::object cwd, std::string mode, std::string python,
                                   py::object env_root, py::object env_name, py::object argv,
                                   std::string worker_script, std::string repo_root);
// The sandbox settings of the environment, `mode` (a str) overriding.
sandbox::SandboxSettings sandbox_settings_for(const py::object& mode);
// A launch failure as the Python API raises it (SandboxUnavailableError for
// a sandbox that cannot be set up).
void unwrap_launch(Status status);

void register_warm_pool(py::module_& m);

}  // namespace o4s::bindings
