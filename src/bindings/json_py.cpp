#include "bindings/json_py.h"

#include <cmath>
#include <string>

namespace o4s::bindings {

namespace {

constexpr int kMaxDepth = 512;  // a self-referencing container must not recurse forever

std::string key_text(py::handle key) {
  if (py::isinstance<py::str>(key)) return key.cast<std::string>();
  if (key.is_none()) return "null";
  if (PyBool_Check(key.ptr())) return key.ptr() == Py_True ? "true" : "false";
  if (PyLong_Check(key.ptr()) || PyFloat_Check(key.ptr())) return py::str(key).cast<std::string>();
  throw py::type_error("keys must be str, int, float, bool or None, not " +
                       std::string(Py_TYPE(key.ptr())->tp_name));
}

Json convert(py::handle object, int depth) {
  if (depth > kMaxDepth) throw py::value_error("Circular reference detected");
  PyObject* o = object.ptr();
  if (o == Py_None) return nullptr;
  if (PyBool_Check(o)) return o == Py_True;
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0) return value;
    if (overflow > 0) {
      unsigned long long big = PyLong_AsUnsignedLongLong(o);
      if (!PyErr_Occurred()) return big;
      PyErr_Clear();
    }
    // Out of 64-bit range: keep the digits exactly, as json.dumps would.
    return Json::parse(py::str(object).cast<std::string>());
  }
  if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);
  if (PyUnicode_Check(o)) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(o, &size);
    if (data == nullptr) {
      // Lone surrogates: encode with replacement rather than fail the frame.
      PyErr_Clear();
      py::bytes encoded =
          py::reinterpret_steal<py::bytes>(PyUnicode_AsEncodedString(o, "utf-8", "replace"));
      return std::string(encoded);
    }
    return std::string(data, static_cast<std::size_t>(size));
  }
  if (PyDict_Check(o)) {
    Json out = Json::object();
    PyObject* key;
    PyObject* value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &key, &value)) {
      out[key_text(key)] = convert(value, depth + 1);
    }
    return out;
  }
  if (PyList_Check(o) || PyTuple_Check(o)) {
    Json out = Json::array();
    py::sequence seq = py::reinterpret_borrow<py::sequence>(object);
    for (py::handle item : seq) out.push_back(convert(item, depth + 1));
    return out;
  }
  throw py::type_error("Object of type " + std::string(Py_TYPE(o)->tp_name) +
                       " is not JSON serializable");
}

}  // namespace

Json to_json(py::handle object) { return convert(object, 0); }

py::object to_python(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      return py::none();
    case Json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case Json::value_t::number_integer:
      return py::int_(value.get<long long>());
    case Json::value_t::number_unsigned:
      return py::int_(value.get<unsigned long long>());
    case Json::value_t::number_float:
      return py::float_(value.get<double>());
    case Json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      PyObject* text = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
      if (text == nullptr) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(text);
    }
    case Json::value_t::array: {
      py::list out(value.size());
      std::size_t i = 0;
      for (const auto& item : value) out[i++] = to_python(item);
      return out;
    }
    case Json::value_t::object: {
      py::dict out;
      for (const auto& [key, item] : value.items()) out[py::str(key)] = to_python(item);
      return out;
    }
    case Json::value_t::binary:
      break;
  }
  return py::none();
}

}  // namespace o4s::bindings
