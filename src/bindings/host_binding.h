// Python bindings of the host side: Store and HostDispatcher. The Python
// modules openai4s.store and openai4s.host_dispatch are thin over these.
#pragma once

#include <pybind11/pybind11.h>

#include "host/dispatcher.h"

namespace o4s::bindings {

void register_host(pybind11::module_& m);

// The host policy in the process environment. Call with the GIL held:
// os.environ's writers (putenv) hold it too.
host::HostSettings current_settings();

// A Python approver: callable(request: dict) -> "once" | "conversation" |
// anything else (deny). It runs with the GIL re-taken; raising denies.
host::Approver python_approver(pybind11::object approve);

}  // namespace o4s::bindings
