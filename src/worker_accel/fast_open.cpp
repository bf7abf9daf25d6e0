// openai4s.kernel._fast_open: the provenance open() fast path, in C.
//
// The worker replaces builtins.open so that files a Cell reads carry lineage
// tags (python/openai4s/kernel/runtime/provenance_files.py). That Python wrapper
// cost about 1 us per open -- a cell reading 2,000 small files ran at 1.2x
// plain Python, the limit. This object does the common case (a str
// path, mode "r"/"rt"/"rb", nothing else given) without a Python frame and
// with a bare fstat(2), and hands every other call to the Python wrapper,
// which stays the definition of the behaviour. Runs in the worker only; it
// links nothing of the host core.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <sys/stat.h>

namespace {

struct FastOpen {
  PyObject_HEAD PyObject* fallback;  // the Python wrapper: every case not handled here
  PyObject* real_open;               // the builtin, for calls provenance leaves alone
  PyObject* is_off;                  // () -> bool: provenance switched off
  PyObject* active;                  // list; [0] is true while a Cell runs
  PyObject* state;                   // provenance state; .root is the execution root
  PyObject* cwd_cache;               // list; [0] is the cached cwd or None
  PyObject* current_cwd;             // () -> str
  PyObject* text_class;              // _TaggedText
  PyObject* reader_class;            // _TaggedReader
  PyObject* file_io;                 // io.FileIO
  PyObject* buffered_reader;         // io.BufferedReader
  Py_ssize_t default_buffer;
  PyObject* weakreflist;  // code may hold builtins.open weakly, as it can the builtin
};

// Interned once at import.
PyObject* s_r;
PyObject* s_rt;
PyObject* s_rb;
PyObject* s_file;
PyObject* s_empty;
PyObject* s_src;
PyObject* s_mode;
PyObject* s_root;
PyObject* s_blksize;
PyObject* s_close;
PyObject* s_slash_dot;
PyObject* s_double_slash;

PyObject* call_fallback(FastOpen* self, PyObject* args, PyObject* kwargs) {
  return PyObject_Call(self->fallback, args, kwargs);
}

// -1 error, 0 false, 1 true.
int first_item_true(PyObject* list) {
  if (!PyList_CheckExact(list) || PyList_GET_SIZE(list) < 1) return 0;
  // Owned across the call: an item's __bool__ may empty the list.
  PyObject* item = Py_NewRef(PyList_GET_ITEM(list, 0));
  int truthy = PyObject_IsTrue(item);
  Py_DECREF(item);
  return truthy;
}

// An absolute, already-normal path outside the root can hold no version of
// this session: its reads carry no tag (same rule as the Python wrapper).
// -1 error, 0 no, 1 yes.
int outside_root_plainly(FastOpen* self, PyObject* file) {
  PyObject* root = PyObject_GetAttr(self->state, s_root);
  if (root == nullptr) return -1;
  int result = 0;
  if (PyUnicode_Check(root) && PyUnicode_GET_LENGTH(root) > 0) {
    Py_ssize_t root_length = PyUnicode_GET_LENGTH(root);
    bool inside = PyUnicode_GET_LENGTH(file) > root_length &&
                  PyUnicode_Tailmatch(file, root, 0, root_length, -1) == 1 &&
                  PyUnicode_READ_CHAR(file, root_length) == '/';
    if (!inside) {
      int dot = PySequence_Contains(file, s_slash_dot);
      int doubled = dot == 0 ? PySequence_Contains(file, s_double_slash) : 0;
      if (dot < 0 || doubled < 0) {
        result = -1;
      } else {
        result = dot == 0 && doubled == 0;
      }
    }
  }
  Py_DECREF(root);
  return result;
}

// Closes `raw` after a failure without losing the failure.
void close_keeping_error(PyObject* raw) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* closed = PyObject_CallMethodNoArgs(raw, s_close);
  Py_XDECREF(closed);
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
}

// The tagged handle for an opened `raw`; nullptr with an exception set.
PyObject* tagged_handle(FastOpen* self, PyObject* raw, PyObject* file, PyObject* mode,
                        bool binary) {
  int fd = PyObject_AsFileDescriptor(raw);
  if (fd < 0) return nullptr;
  struct stat status;
  if (::fstat(fd, &status) != 0) return PyErr_SetFromErrno(PyExc_OSError);
  const long long mtime_ns =
      static_cast<long long>(status.st_mtim.tv_sec) * 1000000000LL + status.st_mtim.tv_nsec;

  PyObject* cwd;
  if (PyUnicode_READ_CHAR(file, 0) == '/') {
    cwd = Py_NewRef(s_empty);
  } else {
    PyObject* cached =
        Py_NewRef(PyList_CheckExact(self->cwd_cache) && PyList_GET_SIZE(self->cwd_cache) > 0
                      ? PyList_GET_ITEM(self->cwd_cache, 0)
                      : Py_None);
    int truthy = PyObject_IsTrue(cached);
    if (truthy < 0) {
      Py_DECREF(cached);
      return nullptr;
    }
    if (truthy) {
      cwd = cached;
    } else {
      Py_DECREF(cached);
      cwd = PyObject_CallNoArgs(self->current_cwd);
    }
    if (cwd == nullptr) return nullptr;
  }
  PyObject* source =
      Py_BuildValue("(OONKLL)", s_file, file, cwd, static_cast<unsigned long long>(status.st_ino),
                    mtime_ns, static_cast<long long>(status.st_size));
  if (source == nullptr) return nullptr;

  PyObject* block = PyObject_GetAttr(raw, s_blksize);
  Py_ssize_t size = block == nullptr ? -1 : PyLong_AsSsize_t(block);
  Py_XDECREF(block);
  if (size == -1 && PyErr_Occurred()) {
    Py_DECREF(source);
    return nullptr;
  }
  if (size <= 1) size = self->default_buffer;
  PyObject* size_object = PyLong_FromSsize_t(size);
  if (size_object == nullptr) {
    Py_DECREF(source);
    return nullptr;
  }

  PyObject* handle = nullptr;
  if (binary) {
    handle = PyObject_CallFunctionObjArgs(self->reader_class, raw, size_object, nullptr);
  } else {
    PyObject* buffer =
        PyObject_CallFunctionObjArgs(self->buffered_reader, raw, size_object, nullptr);
    if (buffer != nullptr) {
      // encoding None: the wrapper picks the locale encoding, as io.open does.
      handle = PyObject_CallFunctionObjArgs(self->text_class, buffer, Py_None, Py_None, Py_None,
                                            nullptr);
      Py_DECREF(buffer);
      if (handle != nullptr && mode != s_r && PyUnicode_Compare(mode, s_r) != 0 &&
          PyObject_SetAttr(handle, s_mode, mode) < 0) {
        Py_CLEAR(handle);
      }
    }
  }
  Py_DECREF(size_object);
  if (handle != nullptr && PyObject_SetAttr(handle, s_src, source) < 0) Py_CLEAR(handle);
  Py_DECREF(source);
  return handle;
}

PyObject* fast_open_call(PyObject* object, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<FastOpen*>(object);
  if (self->fallback == nullptr) {
    // Made by __new__ without __init__ (a curious cell): refuse, never crash.
    PyErr_SetString(PyExc_TypeError, "FastOpen object is not initialised");
    return nullptr;
  }
  Py_ssize_t count = PyTuple_GET_SIZE(args);
  if ((kwargs != nullptr && PyDict_Size(kwargs) > 0) || count < 1 || count > 2) {
    return call_fallback(self, args, kwargs);
  }
  int active = first_item_true(self->active);
  if (active < 0) return nullptr;
  if (!active) return PyObject_Call(self->real_open, args, nullptr);

  PyObject* file = PyTuple_GET_ITEM(args, 0);
  PyObject* mode = count == 2 ? PyTuple_GET_ITEM(args, 1) : s_r;
  if (!PyUnicode_CheckExact(file) || PyUnicode_GET_LENGTH(file) == 0 ||
      !PyUnicode_CheckExact(mode)) {
    return call_fallback(self, args, kwargs);
  }
  bool binary;
  if (PyUnicode_Compare(mode, s_r) == 0 || PyUnicode_Compare(mode, s_rt) == 0) {
    binary = false;
  } else if (PyUnicode_Compare(mode, s_rb) == 0) {
    binary = true;
  } else {
    return call_fallback(self, args, kwargs);
  }

  PyObject* off = PyObject_CallNoArgs(self->is_off);
  if (off == nullptr) return nullptr;
  int is_off = PyObject_IsTrue(off);
  Py_DECREF(off);
  if (is_off < 0) return nullptr;
  if (is_off) return PyObject_Call(self->real_open, args, nullptr);

  if (PyUnicode_READ_CHAR(file, 0) == '/') {
    int plain = outside_root_plainly(self, file);
    if (plain < 0) return nullptr;
    if (plain) return PyObject_Call(self->real_open, args, nullptr);
  }

  PyObject* raw = PyObject_CallFunctionObjArgs(self->file_io, file, s_r, nullptr);
  if (raw == nullptr) return nullptr;
  PyObject* handle = tagged_handle(self, raw, file, mode, binary);
  if (handle == nullptr) close_keeping_error(raw);
  Py_DECREF(raw);
  return handle;
}

int fast_open_init(PyObject* object, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<FastOpen*>(object);
  if (self->fallback != nullptr) {
    // Fields are read without owning them during a call: they never change.
    PyErr_SetString(PyExc_TypeError, "FastOpen object is already initialised");
    return -1;
  }
  static const char* names[] = {"fallback",     "real_open", "is_off",          "active",
                                "state",        "cwd_cache", "current_cwd",     "text_class",
                                "reader_class", "file_io",   "buffered_reader", "default_buffer",
                                nullptr};
  PyObject* fields[11];
  Py_ssize_t default_buffer = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOOOOOOOOOOn", const_cast<char**>(names),
                                   &fields[0], &fields[1], &fields[2], &fields[3], &fields[4],
                                   &fields[5], &fields[6], &fields[7], &fields[8], &fields[9],
                                   &fields[10], &default_buffer)) {
    return -1;
  }
  PyObject** slots[] = {&self->fallback,    &self->real_open,      &self->is_off,
                        &self->active,      &self->state,          &self->cwd_cache,
                        &self->current_cwd, &self->text_class,     &self->reader_class,
                        &self->file_io,     &self->buffered_reader};
  for (int i = 0; i < 11; ++i) Py_XSETREF(*slots[i], Py_NewRef(fields[i]));
  self->default_buffer = default_buffer > 1 ? default_buffer : 8192;
  return 0;
}

int fast_open_traverse(PyObject* object, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<FastOpen*>(object);
  Py_VISIT(Py_TYPE(object));
  Py_VISIT(self->fallback);
  Py_VISIT(self->real_open);
  Py_VISIT(self->is_off);
  Py_VISIT(self->active);
  Py_VISIT(self->state);
  Py_VISIT(self->cwd_cache);
  Py_VISIT(self->current_cwd);
  Py_VISIT(self->text_class);
  Py_VISIT(self->reader_class);
  Py_VISIT(self->file_io);
  Py_VISIT(self->buffered_reader);
  return 0;
}

int fast_open_clear(PyObject* object) {
  auto* self = reinterpret_cast<FastOpen*>(object);
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->real_open);
  Py_CLEAR(self->is_off);
  Py_CLEAR(self->active);
  Py_CLEAR(self->state);
  Py_CLEAR(self->cwd_cache);
  Py_CLEAR(self->current_cwd);
  Py_CLEAR(self->text_class);
  Py_CLEAR(self->reader_class);
  Py_CLEAR(self->file_io);
  Py_CLEAR(self->buffered_reader);
  return 0;
}

void fast_open_dealloc(PyObject* object) {
  PyTypeObject* type = Py_TYPE(object);
  PyObject_GC_UnTrack(object);
  if (reinterpret_cast<FastOpen*>(object)->weakreflist != nullptr) PyObject_ClearWeakRefs(object);
  fast_open_clear(object);
  type->tp_free(object);
  Py_DECREF(type);  // instances of a heap type own a reference to it
}

// What code inspecting builtins.open expects to find.
PyObject* get_wrapped(PyObject* object, void*) {
  auto* self = reinterpret_cast<FastOpen*>(object);
  return Py_NewRef(self->real_open ? self->real_open : Py_None);
}
PyObject* get_name(PyObject*, void*) { return PyUnicode_FromString("open"); }
// inspect.signature(open) describes the Python wrapper, whose parameters
// are the builtin's.
PyObject* get_signature(PyObject* object, void*) {
  auto* self = reinterpret_cast<FastOpen*>(object);
  if (self->fallback == nullptr) Py_RETURN_NONE;
  PyObject* inspect = PyImport_ImportModule("inspect");
  if (inspect == nullptr) return nullptr;
  PyObject* signature = PyObject_CallMethod(inspect, "signature", "O", self->fallback);
  Py_DECREF(inspect);
  return signature;
}
PyObject* get_doc(PyObject* object, void*) {
  auto* self = reinterpret_cast<FastOpen*>(object);
  if (self->real_open == nullptr) Py_RETURN_NONE;
  return PyObject_GetAttrString(self->real_open, "__doc__");
}

PyGetSetDef fast_open_getset[] = {
    {"_openai4s_wrapped", get_wrapped, nullptr, "the builtin open this replaces", nullptr},
    {"__name__", get_name, nullptr, nullptr, nullptr},
    {"__qualname__", get_name, nullptr, nullptr, nullptr},
    {"__signature__", get_signature, nullptr, nullptr, nullptr},
    {"__doc__", get_doc, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// Tagged reads: read() of the tagging file classes, without a Python frame.
// What each one calls and wraps, set once by install_tagged_reads.
struct TaggingRead {
  PyObject* base_read = nullptr;  // e.g. io.TextIOWrapper.read
  PyObject* tag_class = nullptr;  // e.g. provenance_tags.TaggedStr
};
TaggingRead text_read;
TaggingRead bytes_read;

// base_read(self, *args, **kwargs) tagged with self's source when truthy,
// exactly as provenance_files' Python read() does.
PyObject* tagging_read(const TaggingRead& how, PyObject* self, PyObject* const* args, size_t nargsf,
                       PyObject* kwnames) {
  if (how.base_read == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "tagged reads are not installed");
    return nullptr;
  }
  // The Python read(self, size=-1) takes size by position or by name; the
  // io method it wraps takes it by position only.
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t named = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* size = nullptr;
  if (named > 0) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, 0);
    if (named > 1 || nargs > 0 || PyUnicode_CompareWithASCIIString(name, "size") != 0) {
      PyErr_SetString(PyExc_TypeError, "read() takes one argument, size");
      return nullptr;
    }
    size = args[0];
  } else if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "read() takes at most 1 argument");
    return nullptr;
  } else if (nargs == 1) {
    size = args[0];
  }
  PyObject* stack[2] = {self, size};
  PyObject* data = PyObject_Vectorcall(how.base_read, stack, size ? 2 : 1, nullptr);
  if (data == nullptr) return nullptr;
  int truthy = PyObject_IsTrue(data);
  if (truthy <= 0) {
    if (truthy < 0) Py_CLEAR(data);
    return data;
  }
  PyObject* tagged = PyObject_CallOneArg(how.tag_class, data);
  Py_DECREF(data);
  if (tagged == nullptr) return nullptr;
  PyObject* source = PyObject_GetAttr(self, s_src);
  if (source == nullptr || PyObject_SetAttr(tagged, s_src, source) < 0) Py_CLEAR(tagged);
  Py_XDECREF(source);
  return tagged;
}

PyObject* tagged_text_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
  return tagging_read(text_read, self, args, static_cast<size_t>(nargs), kwnames);
}

PyObject* tagged_bytes_read(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
  return tagging_read(bytes_read, self, args, static_cast<size_t>(nargs), kwnames);
}

// Through void(*)(): the CPython convention for storing a METH_FASTCALL
// function in a PyMethodDef without a function-type-cast warning.
template <typename F>
PyCFunction as_cfunction(F* function) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function));
}

PyMethodDef text_read_def = {"read", as_cfunction(tagged_text_read), METH_FASTCALL | METH_KEYWORDS,
                             "Read, tagging the text with this file's source."};
PyMethodDef bytes_read_def = {"read", as_cfunction(tagged_bytes_read),
                              METH_FASTCALL | METH_KEYWORDS,
                              "Read, tagging the bytes with this file's source."};

bool install_read(PyObject* cls, PyMethodDef* def, TaggingRead& how, PyObject* base_read,
                  PyObject* tag_class) {
  if (!PyType_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "install_tagged_reads expects classes");
    return false;
  }
  PyObject* descriptor = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls), def);
  if (descriptor == nullptr) return false;
  int rc = PyObject_SetAttrString(cls, "read", descriptor);
  Py_DECREF(descriptor);
  if (rc < 0) return false;
  Py_XSETREF(how.base_read, Py_NewRef(base_read));
  Py_XSETREF(how.tag_class, Py_NewRef(tag_class));
  return true;
}

// install_tagged_reads(text_class, text_base_read, tagged_str,
//                      reader_class, reader_base_read, tagged_bytes)
PyObject* install_tagged_reads(PyObject*, PyObject* args) {
  PyObject *text_class, *text_base, *tagged_str, *reader_class, *reader_base, *tagged_bytes;
  if (!PyArg_ParseTuple(args, "OOOOOO", &text_class, &text_base, &tagged_str, &reader_class,
                        &reader_base, &tagged_bytes)) {
    return nullptr;
  }
  if (!install_read(text_class, &text_read_def, text_read, text_base, tagged_str) ||
      !install_read(reader_class, &bytes_read_def, bytes_read, reader_base, tagged_bytes)) {
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef module_methods[] = {
    {"install_tagged_reads", install_tagged_reads, METH_VARARGS,
     "Give the tagging file classes a C read() (same behaviour as their Python one)."},
    {nullptr, nullptr, 0, nullptr},
};

PyMemberDef fast_open_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(FastOpen, weakreflist), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot fast_open_slots[] = {
    {Py_tp_members, fast_open_members},
    {Py_tp_new, reinterpret_cast<void*>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void*>(fast_open_init)},
    {Py_tp_call, reinterpret_cast<void*>(fast_open_call)},
    {Py_tp_traverse, reinterpret_cast<void*>(fast_open_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(fast_open_clear)},
    {Py_tp_dealloc, reinterpret_cast<void*>(fast_open_dealloc)},
    {Py_tp_getset, fast_open_getset},
    {0, nullptr},
};

PyType_Spec fast_open_spec = {
    "openai4s.kernel._fast_open.FastOpen",   sizeof(FastOpen), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, fast_open_slots,
};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_fast_open",
    "The provenance open() fast path (see provenance_files.make_open).",
    -1,
    module_methods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

bool intern_all() {
  struct Name {
    PyObject** slot;
    const char* text;
  };
  const Name names[] = {{&s_r, "r"},         {&s_rt, "rt"},        {&s_rb, "rb"},
                        {&s_file, "file"},   {&s_empty, ""},       {&s_src, "_openai4s_src"},
                        {&s_mode, "mode"},   {&s_root, "root"},    {&s_blksize, "_blksize"},
                        {&s_close, "close"}, {&s_slash_dot, "/."}, {&s_double_slash, "//"}};
  for (const auto& name : names) {
    *name.slot = PyUnicode_InternFromString(name.text);
    if (*name.slot == nullptr) return false;
  }
  return true;
}

}  // namespace

PyMODINIT_FUNC PyInit__fast_open() {
  if (!intern_all()) return nullptr;
  PyObject* module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  PyObject* type = PyType_FromSpec(&fast_open_spec);
  if (type == nullptr || PyModule_AddObjectRef(module, "FastOpen", type) < 0) {
    Py_XDECREF(type);
    Py_DECREF(module);
    return nullptr;
  }
  Py_DECREF(type);
  return module;
}
