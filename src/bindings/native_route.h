// The stock dispatcher's host calls without Python (issue 25 point 3).
// When a kernel's dispatcher is the stock openai4s.host_dispatch one and
// none of its hooks is overridden, what a host call needs from Python (the
// C++ dispatcher, frame_id, approver, the caller's action context, the
// environment's host policy) is read once per request, with the GIL held,
// and the request's host calls then run entirely in C++.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>

#include "host/dispatcher.h"

namespace o4s::bindings {

class PyKernelHooks;

struct NativeRoute {
  const PyKernelHooks* hooks = nullptr;  // whose host calls it serves
  std::shared_ptr<host::HostDispatcher> dispatcher;
  host::CallContext call;
};

// The route active on this thread for `hooks`, or null: the Python path.
const NativeRoute* active_route(const PyKernelHooks* hooks);

// Makes the route for `owner`'s dispatcher (if it is the stock one) active
// on this thread for the scope's lifetime. Construct and destroy with the
// GIL held; nested scopes restore the outer one.
class NativeRouteScope {
 public:
  NativeRouteScope(const PyKernelHooks* hooks, pybind11::handle owner);
  ~NativeRouteScope();
  NativeRouteScope(const NativeRouteScope&) = delete;
  NativeRouteScope& operator=(const NativeRouteScope&) = delete;

 private:
  std::optional<NativeRoute> route_;
  const NativeRoute* previous_;
};

// The background jobs of the kernel whose host call this thread is serving
// through a Python dispatcher (PyKernelHooks::dispatch's Python path), so a
// stock dispatcher reached that way gives them to the call; null elsewhere.
std::shared_ptr<host::BackgroundJobs> calling_background();

class CallingBackgroundScope {
 public:
  explicit CallingBackgroundScope(std::shared_ptr<host::BackgroundJobs> background);
  ~CallingBackgroundScope();
  CallingBackgroundScope(const CallingBackgroundScope&) = delete;
  CallingBackgroundScope& operator=(const CallingBackgroundScope&) = delete;

 private:
  std::shared_ptr<host::BackgroundJobs> previous_;
};

}  // namespace o4s::bindings
