// Python bindings of the host side: Store and HostDispatcher. The Python
// modules openai4s.store and openai4s.host_dispatch are thin over these.
#pragma once

#include <pybind11/pybind11.h>

namespace o4s::bindings {

void register_host(pybind11::module_& m);

}  // namespace o4s::bindings
