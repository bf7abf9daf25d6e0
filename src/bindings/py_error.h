// Errors across the Python edge: a Python exception carried through the C++
// core as an ErrorCause, and the one place Error codes become exceptions.
#pragma once

#include <pybind11/pybind11.h>

#include "base/result.h"

namespace o4s::bindings {

namespace py = pybind11;

class PyErrorCause final : public ErrorCause {
 public:
  explicit PyErrorCause(py::object value) : value_(std::move(value)) {}
  ~PyErrorCause() override;
  const py::object& value() const { return value_; }

 private:
  py::object value_;
};

// Converts the Python exception being handled into an Error that carries it.
// code kCancelled means "a Python callback raised: re-raise it as is".
Error capture_python_error(py::error_already_set& error, ErrorCode code = ErrorCode::kCancelled);

// Raises the Python exception an Error maps to (KernelBusyError, ValueError,
// TypeError, KernelRestartFailed, RuntimeError, ...), chained to its cause.
[[noreturn]] void raise_error(const Error& error);

template <typename T>
T unwrap(Result<T> result) {
  if (!result) raise_error(result.error());
  return std::move(result).value();
}
inline void unwrap(Status status) {
  if (!status) raise_error(status.error());
}

}  // namespace o4s::bindings
