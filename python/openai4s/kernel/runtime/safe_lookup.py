"""Attribute lookup and listing that never runs the object's own code.

Completion and help look at live objects of the Cell namespace, which may
define ``__getattr__``, ``__getattribute__``, ``__dir__``, properties,
custom descriptors or metaclasses with any of those. Like the variable
inspector, this module reads only through the C-level getters of the base
types: a class's ``__mro__`` and ``__dict__`` via ``type``'s own
descriptors, an instance's ``__dict__`` via the C ``__dict__`` getter found
statically, dict keys with the base ``dict`` methods. A descriptor that is
not one of C's own member/getset descriptors is reported, never executed.
"""

import types

_type_mro = type.__dict__["__mro__"].__get__
_type_dict = type.__dict__["__dict__"].__get__
_type_name = type.__dict__["__name__"].__get__
_type_qualname = type.__dict__["__qualname__"].__get__
_module_dict = types.ModuleType.__dict__["__dict__"].__get__
_mappingproxy_get = types.MappingProxyType.get
_dict_get = dict.get
_dict_keys = dict.keys
#: C descriptors whose __get__ reads a slot or calls a C getter.
_C_DESCRIPTORS = (
    type(type.__dict__["__dict__"]),  # getset_descriptor
    type(types.FunctionType.__dict__["__code__"]),  # member_descriptor
)
_MISSING = object()
_EMPTY = types.MappingProxyType({})
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


class Unsafe(Exception):
    """Getting the value would run code we do not run (a property, a hook)."""

    def __init__(self, what):
        super().__init__(what)
        self.what = what


def is_class(obj):
    """isinstance(obj, type) without the ``__class__`` lookup isinstance
    falls back to (which a property or __getattribute__ could answer)."""
    return issubclass(type(obj), type)


def _is(cls, candidates):
    for candidate in candidates:
        if cls is candidate:
            return True
    return False


def mro(cls):
    try:
        result = _type_mro(cls)
    except Exception:
        return ()
    return result if type(result) is tuple else ()


def class_dict(cls):
    """The class's own namespace (a mappingproxy), or an empty dict."""
    try:
        return _type_dict(cls)
    except Exception:
        return _EMPTY


def _class_lookup(cls, name):
    for klass in mro(cls):
        value = _mappingproxy_get(class_dict(klass), name, _MISSING)
        if value is not _MISSING:
            return value
    return _MISSING


def _is_data_descriptor(value):
    kind = type(value)
    return (
        _class_lookup(kind, "__set__") is not _MISSING
        or _class_lookup(kind, "__delete__") is not _MISSING
    )


def instance_dict(obj):
    """``obj.__dict__`` through the C getter only (None if there is none)."""
    if type(obj) is types.ModuleType:
        try:
            return _module_dict(obj)
        except Exception:
            return None
    getter = _class_lookup(type(obj), "__dict__")
    if getter is _MISSING or not _is(type(getter), _C_DESCRIPTORS):
        return None
    try:
        found = getter.__get__(obj, type(obj))
    except Exception:
        return None
    return found if issubclass(type(found), dict) else None


def get(obj, name):
    """``obj.<name>`` without running user code; raises AttributeError when
    absent, Unsafe when only running code could tell."""
    cls = type(obj)
    if is_class(obj):
        # A class: its own MRO first (no __get__ run: a function stays a
        # function), after the metaclass's data descriptors.
        meta = _class_lookup(cls, name)
        if meta is not _MISSING and _is_data_descriptor(meta):
            return _read_descriptor(meta, obj, name)
        for klass in mro(obj):
            value = _mappingproxy_get(class_dict(klass), name, _MISSING)
            if value is not _MISSING:
                return _unwrap(value)
        if meta is not _MISSING:
            return _unwrap(meta)
        raise AttributeError(name)
    static = _class_lookup(cls, name)
    if static is not _MISSING and _is_data_descriptor(static):
        return _read_descriptor(static, obj, name)
    own = instance_dict(obj)
    if own is not None:
        value = _dict_get(own, name, _MISSING)
        if value is not _MISSING:
            return value
    if static is not _MISSING:
        return _unwrap(static)
    if _class_lookup(cls, "__getattr__") is not _MISSING:
        raise Unsafe(f"{qualname(cls)}.__getattr__")
    raise AttributeError(name)


def _read_descriptor(descriptor, obj, name):
    if _is(type(descriptor), _C_DESCRIPTORS):
        try:
            return descriptor.__get__(obj, type(obj))
        except Exception:
            raise AttributeError(name) from None
    raise Unsafe(f"{type_name(type(descriptor))} {name!r}")


def _unwrap(value):
    """A class attribute as the lookup would see it, short of running code:
    the function behind staticmethod/classmethod; a descriptor of the
    user's (a class defining ``__get__``) is Unsafe."""
    kind = type(value)
    if kind is staticmethod or kind is classmethod:
        try:
            return kind.__dict__["__func__"].__get__(value)
        except Exception:
            return value
    if is_heap_type(kind) and _class_lookup(kind, "__get__") is not _MISSING:
        raise Unsafe(f"{type_name(kind)}.__get__")
    return value


def is_heap_type(cls):
    """Defined in Python (or by a C extension at run time), not a static C
    type: its methods may be anyone's code."""
    try:
        return bool(type.__dict__["__flags__"].__get__(cls) & _HEAPTYPE)
    except Exception:
        return True


def names(obj):
    """Attribute names of ``obj`` as ``dir()`` would list them, statically."""
    found = set()
    own = instance_dict(obj)
    if own is not None:
        found.update(key for key in _dict_keys(own) if type(key) is str)
    if type(obj) is types.ModuleType:
        return found
    classes = list(mro(obj)) if is_class(obj) else []
    classes += list(mro(type(obj)))
    for klass in classes:
        found.update(key for key in class_dict(klass).keys() if type(key) is str)
    return found


def type_name(cls):
    try:
        name = _type_name(cls)
    except Exception:
        return "object"
    return name if type(name) is str else "object"


def qualname(cls):
    try:
        name = _type_qualname(cls)
    except Exception:
        return type_name(cls)
    return name if type(name) is str else type_name(cls)


def resolve(namespace, dotted):
    """The object a dotted name denotes, from ``namespace`` then builtins."""
    parts = dotted.split(".")
    head = parts[0]
    value = _dict_get(namespace, head, _MISSING)
    if value is _MISSING:
        import builtins

        value = _dict_get(_module_dict(builtins), head, _MISSING)
    if value is _MISSING:
        raise AttributeError(head)
    for part in parts[1:]:
        value = get(value, part)
    return value
