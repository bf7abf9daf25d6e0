#include "bindings/kernel_core.h"

#include <pybind11/stl.h>

#include <memory>

#include "bindings/json_py.h"
#include "bindings/native_route.h"
#include "bindings/native_transport.h"
#include "bindings/py_error.h"
#include "bindings/py_hooks.h"
#include "bindings/warm_pool_binding.h"
#include "host_hooks/background_workers.h"
#include "kernel/kernel_manager.h"
#include "sandbox/kernel_sandbox.h"

namespace o4s::bindings {

namespace {

using kernel::KernelHooks;
using kernel::KernelManager;

std::optional<std::string> optional_string(const py::object& value) {
  if (value.is_none()) return std::nullopt;
  return py::str(value).cast<std::string>();
}

KernelHooks::Seam seam_named(const std::string& name) {
  if (name == "_readline") return KernelHooks::Seam::kReadline;
  if (name == "_send") return KernelHooks::Seam::kSend;
  if (name == "_service_host_call") return KernelHooks::Seam::kServiceHostCall;
  throw py::value_error("not a kernel seam: " + name);
}

// Runs fn with the GIL released: the core blocks on pipes and locks, and
// re-takes the GIL itself whenever it calls back into Python.
template <typename F>
auto released(F&& fn) -> decltype(fn()) {
  py::gil_scoped_release nogil;
  return fn();
}

class KernelCore {
 public:
  KernelCore(py::object owner, kernel::KernelOptions options, py::object transport_factory)
      : hooks_(std::make_shared<PyKernelHooks>(owner)) {
    std::shared_ptr<kernel::TransportFactory> factory;
    if (!transport_factory.is_none()) {
      factory = std::make_shared<PyTransportFactory>(std::move(transport_factory));
    }
    bool local = factory == nullptr;
    manager_ = std::make_unique<KernelManager>(std::move(options), hooks_, std::move(factory));
    // A worker that dialled in from elsewhere has no options to copy.
    if (local) {
      background_ = std::make_shared<host_hooks::BackgroundWorkers>(manager_->options());
      hooks_->set_background(background_);
    }
  }

  ~KernelCore() {
    // Shutting a worker down waits on it; never with the GIL held.
    py::gil_scoped_release nogil;
    manager_.reset();
    // A Kernel dropped without shutdown(): its jobs' workers go too.
    if (background_) background_->stop_all();
  }

  // The environment is read here, with the GIL held: Python's os.environ
  // writers (putenv) hold it, and a concurrent setenv may move environ.
  void start(double timeout) {
    kernel::EnvMap environment = kernel::current_process_environment();
    if (background_) background_->set_environment(environment);
    unwrap_launch(released([&] { return manager_->start(timeout, std::move(environment)); }));
  }
  void restart(double timeout) {
    kernel::EnvMap environment = kernel::current_process_environment();
    if (background_) background_->set_environment(environment);
    unwrap_launch(released([&] { return manager_->restart(timeout, std::move(environment)); }));
  }
  // A pooled worker instead of start(); the handle is spent either way.
  void adopt(WarmWorkerHandle& handle) {
    if (!handle.worker) throw py::value_error("this pooled worker was already taken");
    kernel::WarmWorker worker = std::move(*handle.worker);
    handle.worker.reset();
    kernel::EnvMap environment = kernel::current_process_environment();
    if (background_) background_->set_environment(environment);
    unwrap_launch(
        released([&] { return manager_->adopt(std::move(worker), std::move(environment)); }));
  }
  bool wait_standby() {
    return released([&] { return manager_->wait_standby(); });
  }
  py::object standby_pid() {
    auto pid = manager_->standby_pid();
    return pid ? py::object(py::int_(*pid)) : py::none();
  }

  // The kernel's sandbox state as a dict; None for a transport-factory kernel.
  py::object sandbox_status() {
    const auto& box = manager_->options().sandbox;
    if (!box) return py::none();
    return to_python(box->status().to_json());
  }
  py::object sandbox_worker_pidfd() {
    const auto& box = manager_->options().sandbox;
    if (!box) return py::none();
    auto fd = box->worker_pidfd();
    return fd ? py::object(py::int_(*fd)) : py::none();
  }

  py::object execute(const std::string& code, const std::string& origin, py::object cell_id,
                     py::object on_chunk, py::object on_display, py::object on_input,
                     const std::string& cell_name) {
    std::optional<PyChunkSink> sink;
    if (!on_chunk.is_none()) sink.emplace(on_chunk);
    std::optional<PyDisplaySink> displays;
    if (!on_display.is_none()) displays.emplace(on_display);
    std::optional<PyInputSource> input;
    if (!on_input.is_none()) input.emplace(on_input);
    std::optional<std::string> id;
    if (!cell_id.is_none()) {
      std::string text = py::str(cell_id).cast<std::string>();
      if (!text.empty()) id = std::move(text);
    }
    NativeRouteScope route(hooks_.get(), hooks_->owner());
    Result<kernel::Json> result = released([&] {
      return manager_->execute(code, origin, id, sink ? &*sink : nullptr,
                               displays ? &*displays : nullptr, input ? &*input : nullptr,
                               cell_name);
    });
    return to_python(unwrap(std::move(result)));
  }

  py::object complete(py::object code, py::object cursor) {
    auto [text, position] = code_and_cursor(code, cursor);
    Result<kernel::Json> result = released([&] { return manager_->complete(text, position); });
    return to_python(unwrap(std::move(result)));
  }

  py::object inspect_code(py::object code, py::object cursor, py::object detail_level) {
    auto [text, position] = code_and_cursor(code, cursor);
    if (PyBool_Check(detail_level.ptr()) || !PyLong_Check(detail_level.ptr())) {
      throw py::type_error("detail_level must be 0 or 1");
    }
    long level = PyLong_AsLong(detail_level.ptr());
    if (level != 0 && level != 1) throw py::value_error("detail_level must be 0 or 1");
    Result<kernel::Json> result =
        released([&] { return manager_->inspect_code(text, position, static_cast<int>(level)); });
    return to_python(unwrap(std::move(result)));
  }

  py::object inspect_variables(py::object limit) {
    // Validated here, before any frame, so a rejected call leaves the worker
    // untouched (bool is an int subclass and is refused on purpose).
    if (PyBool_Check(limit.ptr()) || !PyLong_Check(limit.ptr())) {
      throw py::type_error("variable inspection limit must be an integer");
    }
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(limit.ptr(), &overflow);
    if (overflow != 0) value = overflow > 0 ? LLONG_MAX : LLONG_MIN;
    Result<kernel::Json> result = released([&] { return manager_->inspect_variables(value); });
    return to_python(unwrap(std::move(result)));
  }

  py::tuple interrupt() {
    Result<kernel::InterruptDelivery> delivery = released([&] { return manager_->interrupt(); });
    if (!delivery) {
      if (delivery.error().code == ErrorCode::kUnsupported) {
        py::object cls =
            py::module_::import("openai4s.kernel.errors").attr("KernelInterruptUnavailable");
        PyErr_SetObject(cls.ptr(), cls(delivery.error().message).ptr());
        throw py::error_already_set();
      }
      raise_error(delivery.error());
    }
    return py::make_tuple(delivery->delivered, delivery->target,
                          delivery->reason ? py::object(py::str(*delivery->reason)) : py::none());
  }

  void kill_worker() {
    py::gil_scoped_release nogil;
    manager_->kill_worker();
  }
  void shutdown() {
    py::gil_scoped_release nogil;
    manager_->shutdown();
  }
  bool is_alive() {
    py::gil_scoped_release nogil;
    return manager_->is_alive();
  }

  py::object readline() {
    Result<std::optional<kernel::Json>> frame =
        released([&] { return manager_->native_readline(); });
    auto value = unwrap(std::move(frame));
    return value ? to_python(*value) : py::none();
  }
  void send(py::handle frame) {
    kernel::Json json = to_json(frame);
    unwrap(released([&] { return manager_->native_send(json); }));
  }
  void service_host_call(py::handle frame) {
    kernel::Json json = to_json(frame);
    NativeRouteScope route(hooks_.get(), hooks_->owner());
    unwrap(released([&] { return manager_->native_service_host_call(json); }));
  }

  void set_overridden(const std::string& name, bool value) {
    hooks_->set_overridden(seam_named(name), value);
  }

  // One Popen-like object per worker, so `_proc.stdin.write(...)` and a later
  // `_proc.stdin.flush()` act on the same buffered stream.
  py::object process() {
    auto transport = manager_->transport();
    if (!transport) return py::none();
    if (!cached_process_.is_none() && cached_for_.lock() == transport) return cached_process_;
    cached_process_ = make_process(transport);
    cached_for_ = transport;
    return cached_process_;
  }

  py::object make_process(const std::shared_ptr<kernel::Transport>& transport) {
    if (auto pipe = std::dynamic_pointer_cast<kernel::PipeTransport>(transport)) {
      std::vector<std::string> args;
      const auto& options = manager_->options();
      if (options.argv) {
        args = *options.argv;
      } else {
        args = {options.python, "-u", options.worker_script};
      }
      return py::cast(std::make_shared<WorkerProcess>(pipe, std::move(args)));
    }
    if (auto foreign = std::dynamic_pointer_cast<PyTransport>(transport)) {
      return foreign->object().attr("process");
    }
    return py::none();
  }

  py::object stderr_tail() {
    auto transport = manager_->transport();
    if (auto pipe = std::dynamic_pointer_cast<kernel::PipeTransport>(transport)) {
      return py::cast(pipe->tail());
    }
    if (auto foreign = std::dynamic_pointer_cast<PyTransport>(transport)) {
      return foreign->object().attr("stderr_tail");
    }
    return py::none();
  }

  KernelManager& manager() { return *manager_; }

 private:
  // Checked before any frame: code is a str, cursor an int code-point index
  // within it (the worker counts as Python does).
  static std::pair<std::string, long long> code_and_cursor(const py::object& code,
                                                           const py::object& cursor) {
    if (!PyUnicode_Check(code.ptr())) throw py::type_error("code must be a str");
    if (PyBool_Check(cursor.ptr()) || !PyLong_Check(cursor.ptr())) {
      throw py::type_error("cursor must be an int");
    }
    Py_ssize_t length = PyUnicode_GetLength(code.ptr());
    int overflow = 0;
    long long position = PyLong_AsLongLongAndOverflow(cursor.ptr(), &overflow);
    if (overflow != 0 || position < 0 || position > length) {
      throw py::value_error("cursor must be between 0 and len(code)");
    }
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(code.ptr(), &size);
    if (utf8 == nullptr) {
      PyErr_Clear();
      throw py::value_error("code contains characters that are not valid Unicode (surrogates)");
    }
    return {std::string(utf8, static_cast<std::size_t>(size)), position};
  }

  // A sandbox that cannot be set up gets its own exception type; everything
  // else maps as usual.

  std::shared_ptr<PyKernelHooks> hooks_;
  std::shared_ptr<host_hooks::BackgroundWorkers> background_;
  std::unique_ptr<KernelManager> manager_;
  std::weak_ptr<kernel::Transport> cached_for_;
  py::object cached_process_ = py::none();
};

}  // namespace

kernel::KernelOptions make_options(py::object cwd, std::string mode, std::string python,
                                   py::object env_root, py::object env_name, py::object argv,
                                   std::string worker_script, std::string repo_root) {
  kernel::KernelOptions options;
  options.cwd = optional_string(cwd);
  options.mode = std::move(mode);
  options.python = std::move(python);
  options.env_root = optional_string(env_root);
  options.env_name = optional_string(env_name);
  if (!argv.is_none()) options.argv = argv.cast<std::vector<std::string>>();
  options.worker_script = std::move(worker_script);
  options.repo_root = std::move(repo_root);
  return options;
}

namespace {

// The sandbox a local kernel launches through: the daemon's environment
// decides (OPENAI4S_KERNEL_SANDBOX and friends), an explicit mode overrides.
}  // namespace

sandbox::SandboxSettings sandbox_settings_for(const py::object& mode) {
  auto settings = sandbox::settings_from_environment(kernel::current_process_environment(),
                                                     sandbox::physical_memory_bytes());
  if (!settings) throw py::value_error(settings.error().message);
  if (!mode.is_none()) {
    auto parsed = sandbox::parse_mode(py::str(mode).cast<std::string>());
    if (!parsed) throw py::value_error(parsed.error().message);
    settings->mode = parsed.value();
  }
  return std::move(settings.value());
}

namespace {

std::shared_ptr<sandbox::KernelSandbox> make_sandbox(const py::object& mode) {
  return std::make_shared<sandbox::KernelSandbox>(sandbox_settings_for(mode));
}

py::dict environment_to_dict(const kernel::EnvMap& env) {
  py::dict out;
  for (const auto& [name, value] : env) out[py::str(name)] = py::str(value);
  return out;
}

kernel::EnvMap dict_to_environment(const py::object& source) {
  kernel::EnvMap env;
  if (source.is_none()) return kernel::current_process_environment();
  for (auto item : source.cast<py::dict>()) {
    if (item.second.is_none()) continue;
    env.emplace(py::str(item.first).cast<std::string>(), py::str(item.second).cast<std::string>());
  }
  return env;
}

}  // namespace

namespace {

// Python's KernelCore(...): the options from its keywords; a pooled worker
// keeps the sandbox it was started in.
static std::unique_ptr<KernelCore> new_kernel_core(
    py::object owner, py::object cwd, std::string mode, std::string python, py::object env_root,
    py::object env_name, py::object argv, std::string worker_script, std::string repo_root,
    py::object transport_factory, py::object sandbox_mode, std::vector<std::string> hidden_paths,
    bool capture_sinks, double idle_reply_timeout, std::vector<std::string> read_paths,
    bool standby, py::object warm) {
  auto options = make_options(cwd, std::move(mode), std::move(python), env_root, env_name, argv,
                              std::move(worker_script), std::move(repo_root));
  options.hidden_paths = std::move(hidden_paths);
  options.read_paths = std::move(read_paths);
  options.capture_sinks = capture_sinks;
  if (!(idle_reply_timeout > 0)) {
    throw py::value_error("idle_reply_timeout must be a positive number of seconds");
  }
  options.idle_reply_timeout_s = idle_reply_timeout;
  // A factory's worker runs wherever the factory put it: no local
  // OS sandbox applies (its status says so).
  if (transport_factory.is_none()) options.sandbox = make_sandbox(sandbox_mode);
  options.standby = standby && transport_factory.is_none();
  // A pooled worker keeps the sandbox it was started in.
  if (!warm.is_none()) {
    auto& handle = warm.cast<WarmWorkerHandle&>();
    if (!handle.worker) throw py::value_error("this pooled worker was already taken");
    options.sandbox = handle.worker->sandbox;
  }
  return std::make_unique<KernelCore>(owner, std::move(options), std::move(transport_factory));
}

void register_kernel_core_class(py::module_& m) {
  py::class_<KernelCore>(m, "KernelCore")
      .def(py::init(&new_kernel_core), py::arg("owner"), py::kw_only(), py::arg("cwd"),
           py::arg("mode"), py::arg("python"), py::arg("env_root"), py::arg("env_name"),
           py::arg("argv"), py::arg("worker_script"), py::arg("repo_root"),
           py::arg("transport_factory"), py::arg("sandbox_mode") = py::none(),
           py::arg("hidden_paths") = std::vector<std::string>(), py::arg("capture_sinks") = false,
           py::arg("idle_reply_timeout") = kernel::kDefaultIdleReplyTimeoutS,
           py::arg("read_paths") = std::vector<std::string>(), py::arg("standby") = false,
           py::arg("warm") = py::none())
      .def("start", &KernelCore::start, py::arg("init_timeout"))
      .def("adopt", &KernelCore::adopt, py::arg("warm"))
      .def("wait_standby", &KernelCore::wait_standby)
      .def_property_readonly("standby_pid", &KernelCore::standby_pid)
      .def("restart", &KernelCore::restart, py::arg("init_timeout"))
      .def("execute", &KernelCore::execute, py::arg("code"), py::arg("origin"), py::arg("cell_id"),
           py::arg("on_chunk"), py::arg("on_display") = py::none(),
           py::arg("on_input") = py::none(), py::arg("cell_name") = std::string())
      .def("complete", &KernelCore::complete, py::arg("code"), py::arg("cursor"))
      .def("inspect_code", &KernelCore::inspect_code, py::arg("code"), py::arg("cursor"),
           py::arg("detail_level"))
      .def("inspect_variables", &KernelCore::inspect_variables, py::arg("limit"))
      .def("interrupt", &KernelCore::interrupt)
      .def("kill_worker", &KernelCore::kill_worker)
      .def("shutdown", &KernelCore::shutdown)
      .def("is_alive", &KernelCore::is_alive)
      .def("readline", &KernelCore::readline)
      .def("send", &KernelCore::send)
      .def("service_host_call", &KernelCore::service_host_call)
      .def("set_overridden", &KernelCore::set_overridden)
      .def("process", &KernelCore::process)
      .def("stderr_tail", &KernelCore::stderr_tail)
      .def("sandbox_status", &KernelCore::sandbox_status)
      .def_property_readonly("sandbox_worker_pidfd", &KernelCore::sandbox_worker_pidfd)
      .def_property_readonly("generation",
                             [](KernelCore& core) { return core.manager().generation(); })
      .def_property_readonly(
          "authorization_generation",
          [](KernelCore& core) { return core.manager().authorization_generation(); })
      .def_property_readonly("worker_log_tail",
                             [](KernelCore& core) { return core.manager().worker_log_tail(); })
      .def_property_readonly("stale_stdout_chunks",
                             [](KernelCore& core) { return core.manager().stale_stdout_chunks(); })
      .def_property_readonly("stale_displays",
                             [](KernelCore& core) { return core.manager().stale_displays(); })
      .def_property_readonly("malformed_frames",
                             [](KernelCore& core) { return core.manager().malformed_frames(); })
      .def_property_readonly("mismatched_streams",
                             [](KernelCore& core) { return core.manager().mismatched_streams(); })
      .def_property_readonly("dropped_stdout_chunks", [](KernelCore& core) {
        return core.manager().dropped_stdout_chunks();
      });
}

// The worker environment's allowlist, for the Python side's tests and tools.
void register_environment_functions(py::module_& m) {
  m.def(
      "build_kernel_environment",
      [](py::object source, std::string mode, py::object cwd, py::object env_root,
         py::object env_name, py::object kernel_generation, py::object repo_root,
         py::object interpreter, std::string default_repo_root) {
        kernel::EnvironmentRequest request;
        request.source = dict_to_environment(source);
        request.mode = std::move(mode);
        request.cwd = optional_string(cwd);
        request.env_root = optional_string(env_root);
        request.env_name = optional_string(env_name);
        request.kernel_generation = optional_string(kernel_generation);
        request.repo_root = optional_string(repo_root);
        request.interpreter = optional_string(interpreter);
        request.default_repo_root = std::move(default_repo_root);
        return environment_to_dict(kernel::build_kernel_environment(request));
      },
      py::kw_only(), py::arg("source"), py::arg("mode"), py::arg("cwd"), py::arg("env_root"),
      py::arg("env_name"), py::arg("kernel_generation"), py::arg("repo_root"),
      py::arg("interpreter"), py::arg("default_repo_root"));

  m.def(
      "child_environment",
      [](py::object cwd, std::string mode, std::string python, py::object env_root,
         py::object env_name, py::object argv, std::string repo_root,
         std::string authorization_generation) {
        auto options = make_options(cwd, std::move(mode), std::move(python), env_root, env_name,
                                    argv, std::string(), std::move(repo_root));
        return environment_to_dict(
            kernel::build_kernel_environment(kernel::child_environment_request(
                options, authorization_generation, kernel::current_process_environment())));
      },
      py::kw_only(), py::arg("cwd"), py::arg("mode"), py::arg("python"), py::arg("env_root"),
      py::arg("env_name"), py::arg("argv"), py::arg("repo_root"),
      py::arg("authorization_generation"));

  m.def("name_can_carry_a_secret", &kernel::name_can_carry_a_secret, py::arg("name"));
}

}  // namespace

void register_kernel_core(py::module_& m) {
  register_kernel_core_class(m);
  register_environment_functions(m);
}

}  // namespace o4s::bindings
