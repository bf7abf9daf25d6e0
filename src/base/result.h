// Result<T>: expected failures as values (GCC 12 has no std::expected).
#pragma once

#include <cassert>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace o4s {

enum class ErrorCode {
  kInvalidArgument,     // caller passed a bad value (maps to ValueError)
  kTypeError,           // caller passed a value of the wrong type (TypeError)
  kBusy,                // a transaction is in flight (KernelBusyError)
  kNotAlive,            // the worker process is gone
  kWorkerExited,        // the worker died while we waited for it
  kProtocol,            // the peer broke the frame protocol
  kTimeout,             // a deadline passed
  kSystem,              // an OS call failed; sys_errno says which
  kHandshake,           // the attestation initialization failed
  kRestartFailed,       // the replacement worker could not start
  kUnsupported,         // the operation is not possible for this kernel
  kCancelled,           // a caller-supplied callback raised
  kSandboxUnavailable,  // the OS sandbox the mode demands cannot be set up
  kUnresponsive,        // the worker left an idle request unanswered and was stopped
};

// Opaque carrier for a foreign exception (a Python one, in the bindings) that
// caused an error, so the edge can chain it (`raise ... from cause`).
class ErrorCause {
 public:
  virtual ~ErrorCause() = default;
};

struct Error {
  ErrorCode code = ErrorCode::kSystem;
  std::string message;
  int sys_errno = 0;
  std::shared_ptr<ErrorCause> cause;
};

Error make_error(ErrorCode code, std::string message);
// "<what>: <strerror-name>" with errno kept, e.g. "open: /proc/42/fd: EACCES".
Error system_error(std::string what, int err);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(state_);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(state_));
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::make_unique<Error>(std::move(error))) {}  // NOLINT
  Result(Result&&) noexcept = default;
  Result& operator=(Result&&) noexcept = default;

  bool ok() const { return error_ == nullptr; }
  explicit operator bool() const { return ok(); }
  const Error& error() const& {
    assert(!ok());
    return *error_;
  }
  Error&& error() && {
    assert(!ok());
    return std::move(*error_);
  }

 private:
  std::unique_ptr<Error> error_;
};

using Status = Result<void>;

}  // namespace o4s
