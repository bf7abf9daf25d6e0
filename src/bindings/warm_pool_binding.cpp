#include "bindings/warm_pool_binding.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings/py_error.h"
#include "kernel/warm_memory.h"
#include "kernel/warm_pool.h"
#include "sandbox/kernel_sandbox.h"

namespace o4s::bindings {

WarmWorkerHandle::~WarmWorkerHandle() {
  if (!worker) return;
  py::gil_scoped_release nogil;
  worker->discard();
}

void unwrap_launch(Status status) {
  if (!status && status.error().code == ErrorCode::kSandboxUnavailable) {
    py::object cls =
        py::module_::import("openai4s.kernel.sandbox_status").attr("SandboxUnavailableError");
    PyErr_SetObject(cls.ptr(), cls(status.error().message).ptr());
    throw py::error_already_set();
  }
  unwrap(std::move(status));
}

namespace {

// `with core.fallback():` around a caller's own start (its claim found
// none): the refill waits meanwhile (kernel::WarmPool::FallbackStart).
struct FallbackGuard {
  kernel::WarmPool* pool = nullptr;
  std::unique_ptr<kernel::WarmPool::FallbackStart> held;
};

// Everything a start needs is read here, with the GIL held (the
// environment, the sandbox settings); the refill thread never touches
// Python.
class WarmPoolCore {
 public:
  WarmPoolCore(std::size_t size, std::string workspace_root, kernel::KernelOptions options,
               sandbox::SandboxSettings sandbox, double init_timeout)
      : root_(std::move(workspace_root)),
        options_(std::move(options)),
        sandbox_(std::move(sandbox)),
        environment_(kernel::current_process_environment()),
        init_timeout_(init_timeout) {
    pool_ = std::make_unique<kernel::WarmPool>(size, [this] { return start_one(); });
  }
  ~WarmPoolCore() {
    py::gil_scoped_release nogil;
    pool_.reset();
  }

  py::object claim() {
    auto claimed = [&] {
      py::gil_scoped_release nogil;
      return pool_->claim();
    }();
    if (!claimed) unwrap_launch(std::move(claimed).error());
    if (!claimed.value()) return py::none();
    auto handle = std::make_unique<WarmWorkerHandle>();
    handle->worker = std::move(*claimed.value());
    return py::cast(std::move(handle));
  }
  std::size_t ready() { return pool_->ready(); }
  bool wait_full() {
    py::gil_scoped_release nogil;
    return pool_->wait_full();
  }
  std::vector<pid_t> pids() { return pool_->ready_pids(); }
  kernel::WarmPool& pool() { return *pool_; }
  void stop() {
    py::gil_scoped_release nogil;
    pool_->stop();
  }

 private:
  Result<kernel::WarmWorker> start_one() {
    return kernel::start_in_fresh_workspace(
        root_, "kernel-",
        [this](const std::string& workspace) {
          kernel::KernelOptions options = options_;
          options.cwd = workspace;
          options.sandbox = std::make_shared<sandbox::KernelSandbox>(sandbox_);
          return options;
        },
        init_timeout_, environment_);
  }

  const std::string root_;
  const kernel::KernelOptions options_;
  const sandbox::SandboxSettings sandbox_;
  const kernel::EnvMap environment_;
  const double init_timeout_;
  std::unique_ptr<kernel::WarmPool> pool_;  // last: its thread uses the above
};

}  // namespace

void register_warm_pool(py::module_& m) {
  py::class_<WarmWorkerHandle>(m, "WarmWorker")
      .def_property_readonly("workspace",
                             [](const WarmWorkerHandle& handle) -> py::object {
                               if (!handle.worker || !handle.worker->workspace) return py::none();
                               return py::str(*handle.worker->workspace);
                             })
      .def_property_readonly("taken",
                             [](const WarmWorkerHandle& handle) { return !handle.worker; });
  py::class_<WarmPoolCore>(m, "WarmPoolCore")
      .def(py::init([](std::size_t size, std::string workspace_root, std::string mode,
                       std::string python, std::string worker_script, std::string repo_root,
                       py::object sandbox_mode, std::vector<std::string> hidden_paths,
                       double idle_reply_timeout, double init_timeout) {
             auto options = make_options(py::none(), std::move(mode), std::move(python), py::none(),
                                         py::none(), py::none(), std::move(worker_script),
                                         std::move(repo_root));
             options.hidden_paths = std::move(hidden_paths);
             options.idle_reply_timeout_s = idle_reply_timeout;
             return std::make_unique<WarmPoolCore>(
                 size, std::move(workspace_root), std::move(options),
                 sandbox_settings_for(sandbox_mode), init_timeout);
           }),
           py::kw_only(), py::arg("size"), py::arg("workspace_root"), py::arg("mode"),
           py::arg("python"), py::arg("worker_script"), py::arg("repo_root"),
           py::arg("sandbox_mode"), py::arg("hidden_paths"), py::arg("idle_reply_timeout"),
           py::arg("init_timeout"))
      .def("claim", &WarmPoolCore::claim)
      .def_property_readonly("ready", &WarmPoolCore::ready)
      .def("wait_full", &WarmPoolCore::wait_full)
      .def("pids", &WarmPoolCore::pids)
      .def(
          "fallback",
          [](WarmPoolCore& core) {
            return FallbackGuard{&core.pool(), nullptr};
          },
          py::keep_alive<0, 1>())
      .def("stop", &WarmPoolCore::stop);
  py::class_<FallbackGuard>(m, "WarmPoolFallback")
      .def("__enter__",
           [](FallbackGuard& guard) {
             if (!guard.held) {
               guard.held = std::make_unique<kernel::WarmPool::FallbackStart>(*guard.pool);
             }
           })
      .def(
          "__exit__",
          [](FallbackGuard& guard, const py::object&, const py::object&, const py::object&) {
            guard.held.reset();
          },
          py::arg("exc_type"), py::arg("exc"), py::arg("traceback"));
  m.def(
      "tree_rss_bytes", [](pid_t pid) { return kernel::tree_rss_bytes(pid); }, py::arg("pid"),
      "VmRSS of pid and its descendants, in bytes (0 for a process gone).");
}

}  // namespace o4s::bindings
