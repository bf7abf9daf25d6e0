// What a front door that hosts kernels in C++ (the Jupyter kernel, the MCP
// server) builds for each one: its host dispatcher over the shared store,
// and the manager's options for a Python or an R worker. One place, so the
// two front doors cannot drift apart on how a kernel is set up.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "host/dispatcher.h"
#include "host_hooks/background_workers.h"
#include "host_hooks/native_hooks.h"
#include "kernel/kernel_manager.h"
#include "sandbox/sandbox_settings.h"

namespace o4s::host_hooks {

struct FrontDoorKernel {
  std::string language = "python";  // "python" | "r"
  std::string workspace;
  std::string python;     // the Python worker's interpreter
  std::string repo_root;  // the directory holding the openai4s package
  std::string data_dir;   // the store and artifacts: hidden from the worker
  std::vector<std::string> r_worker_argv;
};

// The kernel's own dispatcher: `workspace`'s host calls, audited in `store`,
// artifacts under `data_dir`/artifacts.
std::shared_ptr<host::HostDispatcher> front_door_dispatcher(std::shared_ptr<store::Store> store,
                                                            const std::string& workspace,
                                                            const std::string& data_dir);

// The manager's options. An R worker prints a visible value itself (to the
// cell's stdout sink, as IRkernel's text output) and its output comes back
// through host fifos; a Python worker's last value comes back as a display
// bundle (a client's Out[n]).
kernel::KernelOptions front_door_kernel_options(const FrontDoorKernel& kernel,
                                                const sandbox::SandboxSettings& sandbox);

// The kernel's hooks: its host calls go to `dispatcher`, and its cells may
// start background jobs, each in a worker made from `options` (the
// kernel's own, language and sandbox settings included), each admitted by
// `admission` when given (the MCP server's --max-kernels), and `released`
// told when one's worker is gone.
std::shared_ptr<NativeKernelHooks> front_door_hooks(
    std::shared_ptr<host::HostDispatcher> dispatcher, host::HostSettings settings,
    std::optional<std::string> frame_id, const kernel::KernelOptions& options,
    BackgroundWorkers::Admission admission = {}, BackgroundWorkers::Released released = {});

}  // namespace o4s::host_hooks
