#include "bindings/py_hooks.h"

#include <vector>

#include "bindings/json_py.h"
#include "bindings/native_route.h"
#include "bindings/native_transport.h"
#include "bindings/py_error.h"
#include "host_hooks/native_hooks.h"

namespace o4s::bindings {

void release_with_gil(py::object& object) {
  if (!Py_IsInitialized()) {
    object.release();
    return;
  }
  py::gil_scoped_acquire gil;
  object = py::object();
}

PyKernelHooks::PyKernelHooks(py::handle owner) : owner_(owner) {}

PyKernelHooks::~PyKernelHooks() {
  py::object weak = std::move(owner_);
  release_with_gil(weak);
}

py::object PyKernelHooks::owner() const { return owner_(); }

bool PyKernelHooks::overridden(Seam seam) const {
  switch (seam) {
    case Seam::kReadline:
      return readline_.load();
    case Seam::kSend:
      return send_.load();
    case Seam::kServiceHostCall:
      return service_.load();
  }
  return false;
}

void PyKernelHooks::set_overridden(Seam seam, bool value) {
  switch (seam) {
    case Seam::kReadline:
      readline_.store(value);
      break;
    case Seam::kSend:
      send_.store(value);
      break;
    case Seam::kServiceHostCall:
      service_.store(value);
      break;
  }
}

namespace {

// An interned attribute name, made once: the dispatch path looks the same
// names up on every host call. Never freed (it lives as long as the module).
PyObject* interned(const char* text) {
  PyObject* name = PyUnicode_InternFromString(text);
  if (name == nullptr) throw py::error_already_set();
  return name;
}

// getattr(object, name, None) without hasattr's cost: a miss on a plain
// object sets no AttributeError at all, where py::hasattr builds and
// discards one per call. Like hasattr, any failure counts as absent.
py::object optional_attr(py::handle object, PyObject* name) {
  PyObject* result = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  int found = PyObject_GetOptionalAttr(object.ptr(), name, &result);
#else
  int found = _PyObject_LookupAttr(object.ptr(), name, &result);
#endif
  if (found < 0) PyErr_Clear();
  if (found <= 0) return py::object();
  return py::reinterpret_steal<py::object>(result);
}

// Enters the dispatcher's optional binding context managers, in the order
// the spec gives, and leaves them in reverse whatever happens.
class DispatcherBindings {
 public:
  void enter(const py::object& binder, const py::object& arg) {
    py::object manager = binder(arg);
    manager.attr("__enter__")();
    entered_.push_back(std::move(manager));
  }
  void exit_all() {
    while (!entered_.empty()) {
      py::object manager = std::move(entered_.back());
      entered_.pop_back();
      manager.attr("__exit__")(py::none(), py::none(), py::none());
    }
  }
  ~DispatcherBindings() {
    // Unwinding with a Python error set: leave the managers without raising.
    while (!entered_.empty()) {
      try {
        entered_.back().attr("__exit__")(py::none(), py::none(), py::none());
      } catch (py::error_already_set&) {
      }
      entered_.pop_back();
    }
  }

 private:
  std::vector<py::object> entered_;
};

}  // namespace

kernel::DispatchOutcome PyKernelHooks::dispatch(const std::string& method, const Json& args,
                                                const kernel::DispatchContext& context) {
  // The stock dispatcher with nothing overridden: no GIL, no Python.
  if (const NativeRoute* route = active_route(this)) {
    return host_hooks::dispatch(*route->dispatcher, method, args, context, route->call);
  }
  py::gil_scoped_acquire gil;
  try {
    py::object kernel = owner();
    if (kernel.is_none()) return kernel::NoDispatcher{};
    py::object dispatcher = kernel.attr("dispatcher");
    if (dispatcher.is_none()) return kernel::NoDispatcher{};
    static PyObject* const bash_name = interned("bind_bash_generation");
    static PyObject* const action_name = interned("bind_action_context");
    static PyObject* const sandbox_name = interned("bind_sandbox_status");
    DispatcherBindings bindings;
    if (py::object bind = optional_attr(dispatcher, bash_name)) {
      bindings.enter(bind, py::str(context.authorization_generation));
    }
    if (py::object bind = optional_attr(dispatcher, action_name)) {
      // The execute caller's action attribution (Kernel.bind_action_context
      // or execute(action_context=...)), so audit rows and permission
      // requests name the agent action that caused them.
      static PyObject* const active_name = interned("_active_action_context");
      py::object active = optional_attr(kernel, active_name);
      bindings.enter(bind, active ? active() : py::dict());
    }
    if (py::object bind = optional_attr(dispatcher, sandbox_name)) {
      bindings.enter(bind, kernel.attr("sandbox_status"));
    }
    // A stock dispatcher on the Python path still starts this kernel's jobs.
    CallingBackgroundScope calling(background_);
    py::object result = dispatcher(py::str(method), to_python(args));
    Json data = to_json(result);
    bindings.exit_all();
    return data;
  } catch (py::error_already_set& error) {
    // Any exception from the dispatcher (or from serialising its result)
    // becomes the host_response's error; the reader loop never dies from it.
    return kernel::DispatchRaised{capture_python_error(error).message};
  } catch (const std::exception& error) {
    return kernel::DispatchRaised{error.what()};
  }
}

void PyKernelHooks::generation_ended(const std::string& authorization_generation) {
  // Restart or shutdown: no background job outlives the worker that
  // started it. Their threads never take the GIL, so this may wait on them.
  if (background_) background_->stop_all();
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  try {
    py::object kernel = owner();
    if (kernel.is_none()) return;
    py::object dispatcher = kernel.attr("dispatcher");
    if (dispatcher.is_none()) return;
    static PyObject* const revoke_name = interned("revoke_bash_generation");
    if (py::object revoke = optional_attr(dispatcher, revoke_name)) {
      revoke(py::str(authorization_generation));
    }
  } catch (py::error_already_set& error) {
    // Shutdown must finish; an unrevoked token still fails the generation
    // check at consume time.
    error.discard_as_unraisable("revoking a kernel generation's bash capabilities");
  }
}

Result<std::optional<Json>> PyKernelHooks::readline_override() {
  py::gil_scoped_acquire gil;
  try {
    py::object frame = owner().attr("_readline")();
    if (frame.is_none()) return std::optional<Json>();
    return std::optional<Json>(to_json(frame));
  } catch (py::error_already_set& error) {
    return capture_python_error(error);
  }
}

Status PyKernelHooks::send_override(const Json& frame) {
  py::gil_scoped_acquire gil;
  try {
    owner().attr("_send")(to_python(frame));
    return {};
  } catch (py::error_already_set& error) {
    return capture_python_error(error);
  }
}

Status PyKernelHooks::service_host_call_override(const Json& frame) {
  py::gil_scoped_acquire gil;
  try {
    owner().attr("_service_host_call")(to_python(frame));
    return {};
  } catch (py::error_already_set& error) {
    return capture_python_error(error);
  }
}

PyTransport::PyTransport(py::object object) : object_(std::move(object)) {}

PyTransport::~PyTransport() { release_with_gil(object_); }

Status PyTransport::write_line(std::string_view line) {
  py::gil_scoped_acquire gil;
  try {
    object_.attr("write_line")(py::str(line.data(), line.size()));
    return {};
  } catch (py::error_already_set& error) {
    return capture_python_error(error, ErrorCode::kSystem);
  }
}

Result<std::optional<std::string>> PyTransport::read_line() {
  py::gil_scoped_acquire gil;
  try {
    py::object line = object_.attr("read_line")();
    if (line.is_none()) return std::optional<std::string>();
    std::string text = line.cast<std::string>();
    if (text.empty()) return std::optional<std::string>();
    return std::optional<std::string>(std::move(text));
  } catch (py::error_already_set& error) {
    return capture_python_error(error, ErrorCode::kSystem);
  } catch (const py::cast_error&) {
    return make_error(ErrorCode::kProtocol, "transport read_line returned a non-string");
  }
}

bool PyTransport::alive() {
  py::gil_scoped_acquire gil;
  try {
    return py::bool_(object_.attr("alive")());
  } catch (py::error_already_set&) {
    return false;
  }
}

bool PyTransport::interrupt() {
  py::gil_scoped_acquire gil;
  try {
    return py::bool_(object_.attr("interrupt")());
  } catch (py::error_already_set&) {
    return false;
  }
}

void PyTransport::kill() {
  py::gil_scoped_acquire gil;
  try {
    object_.attr("kill")();
  } catch (py::error_already_set&) {
  }
}

Status PyTransport::close(bool graceful) {
  py::gil_scoped_acquire gil;
  try {
    object_.attr("close")(py::arg("graceful") = graceful);
    return {};
  } catch (py::error_already_set& error) {
    return capture_python_error(error, ErrorCode::kSystem);
  }
}

std::optional<pid_t> PyTransport::local_pid() {
  py::gil_scoped_acquire gil;
  try {
    py::object process = object_.attr("process");
    if (process.is_none()) return std::nullopt;
    return process.attr("pid").cast<pid_t>();
  } catch (py::error_already_set&) {
    return std::nullopt;
  } catch (const py::cast_error&) {
    return std::nullopt;
  }
}

std::optional<kernel::StderrSnapshot> PyTransport::stderr_snapshot() {
  py::gil_scoped_acquire gil;
  try {
    py::object tail = object_.attr("stderr_tail");
    if (tail.is_none()) return std::nullopt;
    kernel::StderrSnapshot snapshot;
    snapshot.text = py::str(tail.attr("text")()).cast<std::string>();
    snapshot.retained = snapshot.text.size();
    snapshot.seen = snapshot.retained;
    return snapshot;
  } catch (py::error_already_set&) {
    return std::nullopt;
  }
}

PyTransportFactory::PyTransportFactory(py::object factory) : factory_(std::move(factory)) {}

PyTransportFactory::~PyTransportFactory() { release_with_gil(factory_); }

Result<std::shared_ptr<kernel::Transport>> PyTransportFactory::make() {
  py::gil_scoped_acquire gil;
  try {
    py::object transport = factory_();
    // Our own PipeTransport needs no Python in its path.
    if (auto native = native_pipe_transport(transport)) return native;
    return std::shared_ptr<kernel::Transport>(std::make_shared<PyTransport>(std::move(transport)));
  } catch (py::error_already_set& error) {
    return capture_python_error(error);
  }
}

Status PyChunkSink::deliver(const std::string& text) {
  py::gil_scoped_acquire gil;
  try {
    callback_(to_python(Json(text)));
    return {};
  } catch (py::error_already_set& error) {
    return capture_python_error(error);
  }
}

Status PyDisplaySink::deliver(const Json& bundle) {
  py::gil_scoped_acquire gil;
  try {
    callback_(to_python(bundle));
    return {};
  } catch (py::error_already_set& error) {
    return capture_python_error(error);
  }
}

kernel::InputAnswer PyInputSource::ask(const std::string& prompt, bool password) {
  py::gil_scoped_acquire gil;
  kernel::InputAnswer answer;
  try {
    py::object value = callback_(py::str(prompt), py::bool_(password));
    if (!PyUnicode_Check(value.ptr())) {
      answer.error =
          "on_input returned " + std::string(Py_TYPE(value.ptr())->tp_name) + ", expected str";
      return answer;
    }
    answer.value = value.cast<std::string>();
  } catch (py::error_already_set& error) {
    if (error.matches(PyExc_KeyboardInterrupt)) {
      answer.interrupt = true;
      return answer;
    }
    std::string type = error.type() ? py::str(error.type().attr("__name__")).cast<std::string>()
                                    : std::string("Exception");
    answer.error = "on_input raised " + type + ": " + capture_python_error(error).message;
  } catch (const py::cast_error&) {
    answer.error = "on_input returned text that is not valid Unicode";
  }
  return answer;
}

}  // namespace o4s::bindings
