// Adapters from Python objects to the core's embedder interfaces: the Kernel
// instance (dispatcher, overridden seams), factory transports, on_chunk.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <memory>

#include "host/background_jobs.h"
#include "kernel/kernel_hooks.h"

namespace o4s::bindings {

namespace py = pybind11;
using kernel::Json;

// Holds the Python Kernel weakly (the Kernel owns the core, not the reverse)
// and resolves `dispatcher` and overridden seams on it at call time.
class PyKernelHooks final : public kernel::KernelHooks {
 public:
  explicit PyKernelHooks(py::handle owner);
  ~PyKernelHooks() override;

  kernel::DispatchOutcome dispatch(const std::string& method, const Json& args,
                                   const kernel::DispatchContext& context) override;
  bool overridden(Seam seam) const override;
  Result<std::optional<Json>> readline_override() override;
  Status send_override(const Json& frame) override;
  Status service_host_call_override(const Json& frame) override;
  void generation_ended(const std::string& authorization_generation) override;

  void set_overridden(Seam seam, bool value);
  // The kernel's background jobs (host.exec_background); set once, before
  // its worker starts. Null: the kernel cannot start any.
  void set_background(std::shared_ptr<host::BackgroundJobs> background) {
    background_ = std::move(background);
  }
  const std::shared_ptr<host::BackgroundJobs>& background() const { return background_; }
  // The Python Kernel, or None once it is gone. GIL held.
  py::object owner() const;

 private:
  py::weakref owner_;
  std::atomic<bool> readline_{false};
  std::atomic<bool> send_{false};
  std::atomic<bool> service_{false};
  std::shared_ptr<host::BackgroundJobs> background_;
};

// Any object with the transport interface (spec kernel.md §2.9).
class PyTransport final : public kernel::Transport {
 public:
  explicit PyTransport(py::object object);
  ~PyTransport() override;

  Status write_line(std::string_view line) override;
  Result<std::optional<std::string>> read_line() override;
  bool alive() override;
  bool interrupt() override;
  void kill() override;
  Status close(bool graceful) override;
  std::optional<pid_t> local_pid() override;
  std::optional<kernel::StderrSnapshot> stderr_snapshot() override;

  const py::object& object() const { return object_; }

 private:
  py::object object_;
};

class PyTransportFactory final : public kernel::TransportFactory {
 public:
  explicit PyTransportFactory(py::object factory);
  ~PyTransportFactory() override;
  Result<std::shared_ptr<kernel::Transport>> make() override;

 private:
  py::object factory_;
};

class PyChunkSink final : public kernel::ChunkSink {
 public:
  explicit PyChunkSink(py::object callback) : callback_(std::move(callback)) {}
  Status deliver(const std::string& text) override;

 private:
  py::object callback_;  // owned by the caller's frame for the whole execute
};

// on_display: called with each bundle as a dict.
class PyDisplaySink final : public kernel::DisplaySink {
 public:
  explicit PyDisplaySink(py::object callback) : callback_(std::move(callback)) {}
  Status deliver(const Json& bundle) override;

 private:
  py::object callback_;  // owned by the caller's frame for the whole execute
};

// on_input(prompt, password) -> str. A raise becomes the cell's error (a
// KeyboardInterrupt: the cell's interrupt), never the caller's.
class PyInputSource final : public kernel::InputSource {
 public:
  explicit PyInputSource(py::object callback) : callback_(std::move(callback)) {}
  kernel::InputAnswer ask(const std::string& prompt, bool password) override;

 private:
  py::object callback_;
};

// Drops a Python reference safely from any thread, or not at all once the
// interpreter is finalising.
void release_with_gil(py::object& object);

}  // namespace o4s::bindings
