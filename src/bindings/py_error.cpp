#include "bindings/py_error.h"

namespace o4s::bindings {

PyErrorCause::~PyErrorCause() {
  if (!Py_IsInitialized()) {
    value_.release();  // the interpreter is gone; nothing left to decref into
    return;
  }
  py::gil_scoped_acquire gil;
  value_ = py::object();
}

Error capture_python_error(py::error_already_set& error, ErrorCode code) {
  py::object value = error.value();
  std::string message;
  try {
    message = py::str(value).cast<std::string>();
  } catch (...) {
    message = "<unprintable exception>";
  }
  return Error{code, std::move(message), 0, std::make_shared<PyErrorCause>(std::move(value))};
}

namespace {

py::object errors_module() { return py::module_::import("openai4s.kernel.errors"); }

py::object exception_class(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBusy:
      return errors_module().attr("KernelBusyError");
    case ErrorCode::kRestartFailed:
      return errors_module().attr("KernelRestartFailed");
    case ErrorCode::kInvalidArgument:
      return py::reinterpret_borrow<py::object>(PyExc_ValueError);
    case ErrorCode::kTypeError:
      return py::reinterpret_borrow<py::object>(PyExc_TypeError);
    case ErrorCode::kTimeout:
      // Also the store's busy database: not a kernel error, so the builtin.
      return py::reinterpret_borrow<py::object>(PyExc_TimeoutError);
    case ErrorCode::kNotAlive:
      return errors_module().attr("KernelNotAliveError");
    case ErrorCode::kWorkerExited:
      return errors_module().attr("KernelDiedError");
    case ErrorCode::kProtocol:
      return errors_module().attr("KernelProtocolError");
    case ErrorCode::kUnresponsive:
      return errors_module().attr("KernelUnresponsiveError");
    case ErrorCode::kHandshake:
      return errors_module().attr("KernelStartError");
    default:
      return py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  }
}

[[noreturn]] void raise_instance(const py::object& instance) {
  PyObject* tb = PyException_GetTraceback(instance.ptr());  // new reference or null
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(instance.ptr()));
  Py_INCREF(type);
  Py_INCREF(instance.ptr());
  PyErr_Restore(type, instance.ptr(), tb);
  throw py::error_already_set();
}

}  // namespace

void raise_error(const Error& error) {
  auto* cause = dynamic_cast<PyErrorCause*>(error.cause.get());
  if (cause != nullptr) {
    bool is_exception = PyObject_IsInstance(cause->value().ptr(), PyExc_Exception) == 1;
    // A callback's own exception, or a KeyboardInterrupt/SystemExit that
    // must not be disguised as a kernel error, goes out unchanged.
    if (error.code == ErrorCode::kCancelled || !is_exception) raise_instance(cause->value());
  }
  py::object instance = exception_class(error.code)(error.message);
  if (cause != nullptr) instance.attr("__cause__") = cause->value();
  raise_instance(instance);
}

}  // namespace o4s::bindings
