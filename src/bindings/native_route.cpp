#include "bindings/native_route.h"

#include <utility>

#include "bindings/host_binding.h"
#include "bindings/json_py.h"
#include "bindings/py_hooks.h"

namespace o4s::bindings {

namespace py = pybind11;

namespace {

thread_local const NativeRoute* t_route = nullptr;
thread_local std::shared_ptr<host::BackgroundJobs> t_background;

// openai4s.host_dispatch._native_route(kernel): (core, frame_id, approver)
// for a stock dispatcher with no hook overridden, else None. It lives in
// Python because "overridden" is a question about Python objects.
std::optional<NativeRoute> resolve(const PyKernelHooks* hooks, py::handle owner) {
  py::object found = py::module_::import("openai4s.host_dispatch").attr("_native_route")(owner);
  if (found.is_none()) return std::nullopt;
  auto parts = found.cast<py::tuple>();
  NativeRoute route;
  route.hooks = hooks;
  route.dispatcher = parts[0].cast<std::shared_ptr<host::HostDispatcher>>();
  if (!parts[1].is_none()) route.call.frame_id = py::str(parts[1]).cast<std::string>();
  if (!parts[2].is_none()) route.call.approver = python_approver(parts[2]);
  route.call.action_context = to_json(parts[3]);
  route.call.settings = current_settings();
  route.call.background = hooks->background();
  return route;
}

}  // namespace

const NativeRoute* active_route(const PyKernelHooks* hooks) {
  return t_route != nullptr && t_route->hooks == hooks ? t_route : nullptr;
}

NativeRouteScope::NativeRouteScope(const PyKernelHooks* hooks, py::handle owner)
    : previous_(t_route) {
  try {
    route_ = resolve(hooks, owner);
  } catch (py::error_already_set& error) {
    // Not knowing is not an error: the request takes the Python path.
    error.discard_as_unraisable("openai4s: resolving the native host-call route");
  }
  t_route = route_ ? &*route_ : nullptr;
}

NativeRouteScope::~NativeRouteScope() { t_route = previous_; }

std::shared_ptr<host::BackgroundJobs> calling_background() { return t_background; }

CallingBackgroundScope::CallingBackgroundScope(std::shared_ptr<host::BackgroundJobs> background)
    : previous_(std::exchange(t_background, std::move(background))) {}

CallingBackgroundScope::~CallingBackgroundScope() { t_background = std::move(previous_); }

}  // namespace o4s::bindings
