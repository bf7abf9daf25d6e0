#include "host_hooks/front_door.h"

#include "host/env_library.h"
#include "host_hooks/background_workers.h"
#include "sandbox/kernel_sandbox.h"

namespace o4s::host_hooks {

std::shared_ptr<host::HostDispatcher> front_door_dispatcher(std::shared_ptr<store::Store> store,
                                                            const std::string& workspace,
                                                            const std::string& data_dir) {
  host::DispatcherConfig config;
  config.store = std::move(store);
  config.workspace = workspace;
  config.data_dir = data_dir;
  config.artifacts_dir = data_dir + "/artifacts";
  return std::make_shared<host::HostDispatcher>(std::move(config));
}

kernel::KernelOptions front_door_kernel_options(const FrontDoorKernel& kernel,
                                                const sandbox::SandboxSettings& sandbox) {
  kernel::KernelOptions options;
  options.cwd = kernel.workspace;
  options.python = kernel.python;
  options.worker_script = kernel.repo_root + "/openai4s/kernel/worker.py";
  options.repo_root = kernel.repo_root;
  options.hidden_paths = {kernel.data_dir};
  // The workspace's host.env library, read-only (issue 30 part 2).
  if (auto library = host::ensure_env_library(kernel.data_dir, kernel.workspace)) {
    options.read_paths = {library.value()};
  }
  if (kernel.language == "r") {
    // A moved temporary, not `= "r"`: GCC 12 misreports assigning the
    // literal over "repl" as an overlapping memcpy (-Wrestrict).
    options.mode = std::string("r");
    options.argv = kernel.r_worker_argv;
    options.capture_sinks = true;
  } else {
    options.last_value_as_result = true;
  }
  options.sandbox = std::make_shared<sandbox::KernelSandbox>(sandbox);
  return options;
}

std::shared_ptr<NativeKernelHooks> front_door_hooks(
    std::shared_ptr<host::HostDispatcher> dispatcher, host::HostSettings settings,
    std::optional<std::string> frame_id, const kernel::KernelOptions& options,
    BackgroundWorkers::Admission admission, BackgroundWorkers::Released released) {
  auto hooks = std::make_shared<NativeKernelHooks>(std::move(dispatcher), std::move(settings),
                                                   std::move(frame_id));
  hooks->set_background(
      std::make_shared<BackgroundWorkers>(options, std::move(admission), std::move(released)));
  return hooks;
}

}  // namespace o4s::host_hooks
