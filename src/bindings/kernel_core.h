// The Python-facing kernel core: one KernelManager plus the adapters that
// resolve the Python Kernel's seams. openai4s.kernel.manager.Kernel is a thin
// Python class over this.
#pragma once

#include <pybind11/pybind11.h>

namespace o4s::bindings {

void register_kernel_core(pybind11::module_& m);

}  // namespace o4s::bindings
