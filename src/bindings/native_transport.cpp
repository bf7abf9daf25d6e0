#include "bindings/native_transport.h"

#include <pybind11/stl.h>
#include <signal.h>

#include <chrono>

#include "bindings/py_error.h"
#include "kernel/environment.h"

namespace o4s::bindings {

WorkerProcess::WorkerProcess(std::shared_ptr<kernel::PipeTransport> transport,
                             std::vector<std::string> args)
    : transport_(std::move(transport)),
      args_(std::move(args)),
      stdin_(std::make_shared<ProtocolStdin>(
          [weak = std::weak_ptr<kernel::PipeTransport>(transport_)](std::string_view text) {
            auto live = weak.lock();
            if (!live) return Status(make_error(ErrorCode::kNotAlive, "worker is gone"));
            return live->write_line(text);
          })) {}

int WorkerProcess::pid() const { return transport_->child().pid(); }

py::object WorkerProcess::poll() {
  std::optional<int> code;
  {
    py::gil_scoped_release nogil;
    code = transport_->child().poll();
  }
  return code ? py::object(py::int_(*code)) : py::object(py::none());
}

py::object WorkerProcess::returncode() { return poll(); }

py::object WorkerProcess::wait(py::object timeout) {
  std::optional<std::chrono::milliseconds> limit;
  if (!timeout.is_none()) {
    limit = std::chrono::milliseconds(static_cast<long long>(timeout.cast<double>() * 1000.0));
  }
  std::optional<int> code;
  {
    py::gil_scoped_release nogil;
    code = transport_->child().wait(limit);
  }
  if (!code) {
    py::object expired = py::module_::import("subprocess").attr("TimeoutExpired");
    PyErr_SetObject(expired.ptr(), expired(py::cast(args_), timeout).ptr());
    throw py::error_already_set();
  }
  return py::int_(*code);
}

void WorkerProcess::send_signal(int signum) {
  // Popen ignores signals to a process that has already exited.
  (void)transport_->child().send_signal(signum);
}

void WorkerProcess::kill() { send_signal(SIGKILL); }
void WorkerProcess::terminate() { send_signal(SIGTERM); }

std::size_t ProtocolStdin::write(const std::string& text) {
  pending_ += text;
  return text.size();
}

void ProtocolStdin::flush() {
  if (pending_.empty()) return;
  std::string data = std::move(pending_);
  pending_.clear();
  Status written = Status();
  {
    py::gil_scoped_release nogil;
    written = writer_(data);
  }
  if (!written) {
    PyErr_SetString(PyExc_BrokenPipeError, written.error().message.c_str());
    throw py::error_already_set();
  }
}

PythonPipeTransport::PythonPipeTransport(std::shared_ptr<kernel::PipeTransport> transport,
                                         std::vector<std::string> arguments)
    : native(std::move(transport)), args(std::move(arguments)) {}

std::shared_ptr<kernel::Transport> native_pipe_transport(const py::object& object) {
  if (!py::isinstance<PythonPipeTransport>(object)) return nullptr;
  return object.cast<PythonPipeTransport&>().native;
}

namespace {

std::shared_ptr<PythonPipeTransport> start_pipe_transport(std::vector<std::string> command,
                                                          py::object cwd, py::dict env,
                                                          py::object /*stderr_tail_factory*/,
                                                          std::vector<int> pass_fds,
                                                          py::object process_started) {
  proc::SpawnRequest request;
  request.argv = command;
  for (auto item : env) {
    request.env.push_back(py::str(item.first).cast<std::string>() + "=" +
                          py::str(item.second).cast<std::string>());
  }
  if (!cwd.is_none()) request.cwd = py::str(cwd).cast<std::string>();
  request.pass_fds = std::move(pass_fds);
  Result<std::unique_ptr<kernel::PipeTransport>> started =
      make_error(ErrorCode::kSystem, "not started");
  {
    py::gil_scoped_release nogil;
    started = kernel::PipeTransport::start(request);
  }
  if (!started) {
    const Error& error = started.error();
    py::object os_error = py::reinterpret_borrow<py::object>(PyExc_OSError);
    py::object instance = os_error(error.sys_errno, error.message);
    PyErr_SetObject(os_error.ptr(), instance.ptr());
    throw py::error_already_set();
  }
  std::shared_ptr<kernel::PipeTransport> native = std::move(started.value());
  if (!process_started.is_none()) {
    try {
      process_started(native->child().pid());
    } catch (py::error_already_set&) {
      // The adopter refused the child: it must not outlive the refusal.
      py::gil_scoped_release nogil;
      native->kill();
      (void)native->close(false);
      throw;
    }
  }
  return std::make_shared<PythonPipeTransport>(std::move(native), std::move(command));
}

}  // namespace

void register_native_transport(py::module_& m) {
  py::class_<proc::StderrTail, std::shared_ptr<proc::StderrTail>>(m, "StderrTail")
      .def("text",
           [](const proc::StderrTail& tail) {
             std::string raw = tail.text();
             return py::reinterpret_steal<py::str>(
                 PyUnicode_DecodeUTF8(raw.data(), static_cast<Py_ssize_t>(raw.size()), "replace"));
           })
      .def_property_readonly("seen_bytes", &proc::StderrTail::seen_bytes)
      .def_property_readonly("dropped_bytes", &proc::StderrTail::dropped_bytes)
      .def_property_readonly("retained_bytes", &proc::StderrTail::retained_bytes)
      .def_property_readonly("truncated", &proc::StderrTail::truncated)
      .def_property_readonly("budget", &proc::StderrTail::budget)
      .def("__bool__", [](const proc::StderrTail& tail) { return tail.retained_bytes() > 0; })
      .def("__iter__", [](py::object self) {
        py::list once;
        once.append(self.attr("text")());
        return py::iter(once);
      });

  py::class_<ProtocolStdin, std::shared_ptr<ProtocolStdin>>(m, "ProtocolStdin")
      .def("write", &ProtocolStdin::write)
      .def("flush", &ProtocolStdin::flush);

  py::class_<WorkerProcess, std::shared_ptr<WorkerProcess>>(m, "WorkerProcess")
      .def_property_readonly("pid", &WorkerProcess::pid)
      .def_property_readonly("returncode", &WorkerProcess::returncode)
      .def_property_readonly("args", &WorkerProcess::args)
      .def_property_readonly("stdin", &WorkerProcess::stdin_stream)
      .def("poll", &WorkerProcess::poll)
      .def("wait", &WorkerProcess::wait, py::arg("timeout") = py::none())
      .def("kill", &WorkerProcess::kill)
      .def("terminate", &WorkerProcess::terminate)
      .def("send_signal", &WorkerProcess::send_signal);

  py::class_<PythonPipeTransport, std::shared_ptr<PythonPipeTransport>>(m, "PipeTransport")
      .def(py::init(&start_pipe_transport), py::arg("command"), py::kw_only(), py::arg("cwd"),
           py::arg("env"), py::arg("stderr_tail_factory") = py::none(),
           py::arg("pass_fds") = std::vector<int>(), py::arg("process_started") = py::none())
      .def("read_line",
           [](PythonPipeTransport& self) {
             Result<std::optional<std::string>> line = std::optional<std::string>();
             {
               py::gil_scoped_release nogil;
               line = self.native->read_line();
             }
             auto value = unwrap(std::move(line));
             if (!value) return py::str("");
             return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(
                 value->data(), static_cast<Py_ssize_t>(value->size()), "replace"));
           })
      .def("write_line",
           [](PythonPipeTransport& self, const std::string& line) {
             py::gil_scoped_release nogil;
             return self.native->write_line(line).ok();
           })
      .def("alive", [](PythonPipeTransport& self) { return self.native->alive(); })
      .def("interrupt", [](PythonPipeTransport&) { return false; })
      .def("kill",
           [](PythonPipeTransport& self) {
             py::gil_scoped_release nogil;
             self.native->kill();
           })
      .def(
          "close",
          [](PythonPipeTransport& self, bool graceful) {
            py::gil_scoped_release nogil;
            (void)self.native->close(graceful);
          },
          py::kw_only(), py::arg("graceful") = true)
      .def_property_readonly("process",
                             [](PythonPipeTransport& self) {
                               return std::make_shared<WorkerProcess>(self.native, self.args);
                             })
      .def_property_readonly("stderr_tail",
                             [](PythonPipeTransport& self) { return self.native->tail(); });
}

}  // namespace o4s::bindings
