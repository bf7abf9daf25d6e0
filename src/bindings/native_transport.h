// Python-facing wrappers of the native transport: PipeTransport, the
// Popen-like process object (`Kernel._proc`) and the stderr tail.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel/pipe_transport.h"

namespace o4s::bindings {

namespace py = pybind11;

// A text stream over the protocol input: write() buffers, flush() writes.
class ProtocolStdin {
 public:
  using Writer = std::function<Status(std::string_view)>;
  explicit ProtocolStdin(Writer writer) : writer_(std::move(writer)) {}
  std::size_t write(const std::string& text);
  void flush();

 private:
  Writer writer_;
  std::string pending_;
};

// Popen's surface over a worker we spawned. stdin writes the same protocol
// pipe the manager's _send writes, in order (a frame is written whole).
class WorkerProcess {
 public:
  WorkerProcess(std::shared_ptr<kernel::PipeTransport> transport, std::vector<std::string> args);

  int pid() const;
  py::object returncode();
  py::object poll();
  py::object wait(py::object timeout);
  void kill();
  void terminate();
  void send_signal(int signum);
  const std::vector<std::string>& args() const { return args_; }
  const std::shared_ptr<kernel::PipeTransport>& transport() const { return transport_; }
  std::shared_ptr<ProtocolStdin> stdin_stream() const { return stdin_; }

 private:
  std::shared_ptr<kernel::PipeTransport> transport_;
  std::vector<std::string> args_;
  std::shared_ptr<ProtocolStdin> stdin_;
};

class PythonPipeTransport {
 public:
  PythonPipeTransport(std::shared_ptr<kernel::PipeTransport> transport,
                      std::vector<std::string> args);
  std::shared_ptr<kernel::PipeTransport> native;
  std::vector<std::string> args;
};

// The native transport behind a Python PipeTransport object, if it is one.
std::shared_ptr<kernel::Transport> native_pipe_transport(const py::object& object);

void register_native_transport(py::module_& m);

}  // namespace o4s::bindings
