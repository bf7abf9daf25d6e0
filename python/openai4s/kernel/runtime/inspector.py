"""Variable inspector: a safe summary of the Cell namespace.

It must never run user code: no ``__repr__``, ``__len__``, ``__iter__``,
``__sizeof__``, ``__eq__``/``__hash__`` or metaclass hook. Values are read
with the base ``dict`` getter, types with ``type()``, type names through the
base ``type`` descriptor, and only exact builtin types are looked inside.
"""

import collections
import math
import sys
import types

from openai4s.kernel.runtime import wire_json

SAMPLE_ITEMS = 12
PREVIEW_CHARS = 240
NAME_CHARS = 160
INT_PREVIEW_BITS = 4096
TOKEN_HALF = 32_768
TOKEN_LIMIT = 65_536
_HIDDEN_NAMES = frozenset({"__name__", "__builtins__", "host", "openai4s"})
# Dunders, and the skill import gate's helpers: they must live in the user
# namespace (its frozen-sidecar replay reads policy through globals()), but
# the user did not bind them.
_HIDDEN_PREFIXES = ("__", "_o4s_", "_OpenAI4S")
_PRIMITIVES = (type(None), bool, int, float, str, bytes)
# Looked up by identity: ``in`` or a dict lookup on a class would call a
# metaclass __eq__ or __hash__.
_CONTAINERS = (
    (list, ("sequence", "[", "]")),
    (tuple, ("sequence", "(", ")")),
    (dict, ("mapping", "{", "}")),
    (set, ("set", "{", "}")),
    (frozenset, ("set", "frozenset({", "})")),
)
# Builtin containers whose length is read with their own C __len__ (looked
# up on the exact class, never on a subclass).
_SIZED = (
    bytearray,
    range,
    collections.deque,
    collections.OrderedDict,
    collections.defaultdict,
)
_type_name_of = type.__dict__["__name__"].__get__
_type_flags = type.__dict__["__flags__"].__get__
_module_dict = types.ModuleType.__dict__["__dict__"].__get__
_dict_get = dict.__getitem__
_getset_descriptor = type(type.__dict__["__dict__"])
_HEAPTYPE = 1 << 9


class InvalidLimit(ValueError):
    pass


def _is_primitive(cls) -> bool:
    for primitive in _PRIMITIVES:
        if cls is primitive:
            return True
    return False


def _container_shape(cls):
    for container, shape in _CONTAINERS:
        if cls is container:
            return shape
    return None


def _type_name(cls) -> str:
    try:
        name = _type_name_of(cls)
    except Exception:
        return "object"
    if type(name) is not str or not name:
        return "object"
    return name[:NAME_CHARS]


def _bounded_bytes(data: bytes) -> bytes:
    if len(data) > TOKEN_LIMIT:
        return data[:TOKEN_HALF] + b"<...>" + data[-TOKEN_HALF:] + str(len(data)).encode()
    return data


def _bounded_str(text: str) -> bytes:
    if len(text) > TOKEN_LIMIT:
        text = text[:TOKEN_HALF] + "<...>" + text[-TOKEN_HALF:] + str(len(text))
    return _bounded_bytes(text.encode("utf-8", "surrogatepass"))


def _scalar(value):
    """(kind, preview, token bytes, length or None) of an exact primitive."""
    cls = type(value)
    if value is None:
        return "scalar", None, b"none", None
    if cls is bool:
        return "scalar", value, b"bool:1" if value else b"bool:0", None
    if cls is int:
        bits = int.bit_length(value)
        if bits <= INT_PREVIEW_BITS:
            try:
                return "scalar", value, b"int:" + str(value).encode(), None
            except ValueError:
                pass  # a Cell lowered sys.set_int_max_str_digits below it
        low = str(abs(value) & ((1 << 256) - 1))
        sign = "negative" if value < 0 else "positive"
        token = f"int-bounded:{bits}:{low}:{sign}".encode()
        return "scalar", f"<integer {bits} bits>", token, None
    if cls is float:
        if math.isnan(value):
            return "scalar", "NaN", b"float:nan", None
        if math.isinf(value):
            sign = "+" if value > 0 else "-"
            return "scalar", f"{sign}Infinity", f"float:{sign}inf".encode(), None
        return "scalar", value, b"float:" + float.hex(value).encode(), None
    if cls is str:
        length = str.__len__(value)
        preview = value if length <= PREVIEW_CHARS else value[: PREVIEW_CHARS - 1] + "…"
        return "text", preview, b"str:" + _bounded_str(value), length
    length = bytes.__len__(value)
    preview = "0x" + bytes.hex(value[:48]) + ("…" if length > 48 else "")
    return "bytes", preview, b"bytes:" + _bounded_bytes(value), length


def _fingerprint(token: bytes) -> str:
    import hashlib

    return hashlib.sha256(token).hexdigest()


def _describe_scalar(entry: dict, value) -> dict:
    kind, preview, token, length = _scalar(value)
    entry["kind"] = kind
    if length is not None:
        entry["length"] = length
    entry["preview"] = preview
    entry["fingerprint"] = _fingerprint(token)
    return entry


def _sample(value, cls) -> list:
    if cls is dict:
        items = []
        for pair in dict.items(value):
            if len(items) == SAMPLE_ITEMS:
                break
            items.append(pair)
        return items
    if cls is list or cls is tuple:
        return list(cls.__getitem__(value, slice(0, SAMPLE_ITEMS)))
    items = []
    for item in cls.__iter__(value):
        if len(items) == SAMPLE_ITEMS:
            break
        items.append(item)
    return items


def _describe_container(entry: dict, value, cls, shape) -> dict:
    kind, opening, closing = shape
    length = cls.__len__(value)
    entry["kind"] = "container"
    entry["length"] = length
    sample = _sample(value, cls)
    flat = [part for item in sample for part in (item if cls is dict else (item,))]
    if not all(_is_primitive(type(part)) for part in flat):
        return entry
    tokens, previews = [], []
    for item in sample:
        if cls is dict:
            key, val = _scalar(item[0]), _scalar(item[1])
            tokens.append(key[2] + b"=" + val[2])
            previews.append(_json(key[1]) + ": " + _json(val[1]))
        else:
            described = _scalar(item)
            tokens.append(described[2])
            previews.append(_json(described[1]))
    if kind == "set":
        tokens.sort()
        previews.sort()
    more = ", …" if length > SAMPLE_ITEMS else ""
    entry["kind"] = kind
    entry["preview"] = (opening + ", ".join(previews) + more + closing)[:PREVIEW_CHARS]
    head = _type_name(cls).encode("ascii", "backslashreplace") + b":" + str(length).encode()
    entry["fingerprint"] = _fingerprint(head + b":" + b"|".join(tokens))
    return entry


def _json(value) -> str:
    return wire_json.encode(value, separators=(", ", ": "), allow_nan=True)


def _sized(cls) -> bool:
    for sized in _SIZED:
        if cls is sized:
            return True
    return False


def _numpy_ndarray():
    """numpy.ndarray if numpy is imported and it is the real C class.

    Never imports numpy, and reads the module through the base module
    getter: a Cell may have replaced either with an object of its own.
    """
    module = dict.get(sys.modules, "numpy")
    if type(module) is not types.ModuleType:
        return None
    ndarray = dict.get(_module_dict(module), "ndarray")
    if not issubclass(type(ndarray), type) or _type_flags(ndarray) & _HEAPTYPE:
        return None
    return ndarray


def _getset(cls, name):
    descriptor = type.__dict__["__dict__"].__get__(cls).get(name)
    return descriptor if type(descriptor) is _getset_descriptor else None


def _describe_array(entry: dict, value, ndarray) -> dict:
    """Shape, dtype and length of an exact ndarray, through numpy's own C
    getters (no element is read)."""
    shape = _getset(ndarray, "shape").__get__(value)
    if type(shape) is not tuple or not all(type(n) is int for n in shape):
        return entry
    entry["kind"] = "array"
    entry["shape"] = list(shape)
    if shape:
        entry["length"] = shape[0]
    dtype = _getset(ndarray, "dtype").__get__(value)
    for klass in type.__dict__["__mro__"].__get__(type(dtype)):
        getter = _getset(klass, "name")
        if getter is not None:
            dtype_name = getter.__get__(dtype)
            if type(dtype_name) is str:
                entry["dtype"] = dtype_name[:NAME_CHARS]
            break
    return entry


def describe(name: str, value) -> dict:
    cls = type(value)
    entry = {"name": name[:NAME_CHARS], "type": _type_name(cls)}
    if _is_primitive(cls):
        return _describe_scalar(entry, value)
    shape = _container_shape(cls)
    if shape is not None:
        return _describe_container(entry, value, cls, shape)
    if _sized(cls):
        try:
            entry["length"] = cls.__len__(value)
        except (OverflowError, TypeError):
            pass  # a range longer than sys.maxsize
        entry["kind"] = "container"
        return entry
    ndarray = _numpy_ndarray()
    if ndarray is not None and cls is ndarray:
        try:
            return _describe_array(entry, value, ndarray)
        except Exception:
            return entry
    return entry


def visible_names(namespace: dict) -> list:
    names = [
        key
        for key in dict.keys(namespace)
        if type(key) is str and key not in _HIDDEN_NAMES and not key.startswith(_HIDDEN_PREFIXES)
    ]
    names.sort()
    return names


def inspect_namespace(namespace: dict, limit) -> dict:
    """The body of a ``variables_response`` (InvalidLimit for a bad limit)."""
    if type(limit) is not int or not 1 <= limit <= 500:
        raise InvalidLimit("invalid variable inspection limit")
    names = visible_names(namespace)
    variables = []
    for name in names[:limit]:
        try:
            value = _dict_get(namespace, name)
        except KeyError:
            continue
        variables.append(describe(name, value))
    return {"variables": variables, "truncated": len(names) > limit, "limit": limit}
