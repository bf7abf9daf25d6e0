// openai4s._core: the only translation unit that defines the module.
#include <pybind11/pybind11.h>

#include "bindings/host_binding.h"
#include "bindings/kernel_core.h"
#include "bindings/native_transport.h"
#include "bindings/warm_pool_binding.h"
#include "proc/signals.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "openai4s C++ core: process supervision, frame protocol, kernel manager";
  o4s::bindings::register_native_transport(m);
  o4s::bindings::register_kernel_core(m);
  o4s::bindings::register_warm_pool(m);
  o4s::bindings::register_host(m);
  m.def("signal_worker_main_thread", &o4s::proc::signal_main_thread, py::arg("pid"),
        py::arg("signum"), "tgkill(pid, pid, signum): True iff the kernel accepted the signal.");
}
