// JSON <-> Python objects, the only conversion between frames and the API.
#pragma once

#include <pybind11/pybind11.h>

#include "proto/frame_codec.h"

namespace o4s::bindings {

namespace py = pybind11;
using proto::Json;

// Requires the GIL. Raises TypeError like json.dumps for unserialisable
// values; dict keys that are str/int/float/bool/None are stringified as
// json.dumps does.
Json to_json(py::handle object);
py::object to_python(const Json& value);

}  // namespace o4s::bindings
