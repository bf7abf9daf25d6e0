"""Rich display for Cells: ``display(obj)`` and the ``_repr_*_`` protocol.

A display is one ``display`` frame carrying a MIME bundle (spec: the shared
display contract): ``{"type": "display", "id": CELL, "data": {MIME: value},
"metadata": {...}, "display_id": None | str, "update": bool}``. Binary types
(``image/png``, ``image/jpeg``, ...) travel base64-encoded, text types as
str, ``application/json`` and ``+json`` types as the JSON value itself, as
Jupyter does.

Formatting runs the object's own hooks (that is what displaying means), so
it runs as user code; but a hook that raises, returns the wrong type or
returns too much costs only its MIME type, with a one-line note on the
Cell's stderr, never the Cell or the worker. Bundles are bounded in size.

Importable inside a Cell: ``from openai4s.kernel.runtime.display import display``.
"""

import os
import sys

from openai4s.kernel.runtime import wire_json

__all__ = [
    "display",
    "update_display",
    "clear_output",
    "DisplayHandle",
    "HTML",
    "Markdown",
    "Image",
    "SVG",
    "Latex",
    "JSON",
]

#: The largest bundle sent (sum of its values' encoded sizes).
MAX_BUNDLE_BYTES = 8_000_000
#: Per Cell, past which displays are dropped (one note says so).
MAX_CELL_DISPLAY_BYTES = 64_000_000
#: text/plain is a preview, not a payload.
MAX_TEXT_PLAIN_CHARS = 100_000

_BINARY = frozenset({"image/png", "image/jpeg", "image/gif", "application/pdf"})
_METHODS = (
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("image/svg+xml", "_repr_svg_"),
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("text/latex", "_repr_latex_"),
    ("application/json", "_repr_json_"),
    ("application/javascript", "_repr_javascript_"),
    ("application/pdf", "_repr_pdf_"),
)
_RICH_NAMES = tuple(name for _, name in _METHODS) + ("_repr_mimebundle_",)
_type_mro = type.__dict__["__mro__"].__get__
_type_dict = type.__dict__["__dict__"].__get__


class _CellState:
    """Where this Cell's displays go; set by the worker around each Cell."""

    def __init__(self):
        self.cell_id = None
        self.emit = None
        self.sent_bytes = 0
        self.over_budget = False


_state = _CellState()


def begin_cell(cell_id, emit):
    """Route displays to ``emit(frame)`` under ``cell_id`` (worker only)."""
    _state.cell_id = cell_id
    _state.emit = emit
    _state.sent_bytes = 0
    _state.over_budget = False


def end_cell():
    """No Cell runs: displays from leftover threads are dropped."""
    _state.cell_id = None
    _state.emit = None


def _note(message):
    """One line on the Cell's stderr; never raises."""
    try:
        sys.stderr.write(f"display: {message}\n")
    except Exception:
        pass


def _type_name(obj):
    try:
        return type.__dict__["__qualname__"].__get__(type(obj))
    except Exception:
        return "object"


def has_rich_repr(obj) -> bool:
    """Whether ``type(obj)`` (statically, no hooks run) defines a rich repr.

    Looked up on the class, not the instance: a catch-all ``__getattr__``
    (proxies, mocks) would otherwise claim every format. Classes themselves
    are not displayed richly (their ``_repr_*_`` are unbound methods).
    """
    if isinstance(obj, type):
        return False
    try:
        for klass in _type_mro(type(obj)):
            namespace = _type_dict(klass)
            for name in _RICH_NAMES:
                if name in namespace:
                    return True
    except Exception:
        return False
    return False


def _bound_method(obj, name):
    """``obj.name`` if the class defines it, else None."""
    for klass in _type_mro(type(obj)):
        if name in _type_dict(klass):
            method = getattr(obj, name, None)
            return method if callable(method) else None
    return None


def _split(result):
    """A ``_repr_*_`` result may be ``(data, metadata)``."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict):
        return result[0], result[1]
    return result, None


def _encode_value(mime, value):
    """The wire value for ``mime``, or raise TypeError with the reason."""
    if mime in _BINARY or (mime.startswith("image/") and mime != "image/svg+xml"):
        # Imported here: most cells never show an image, and every kernel's
        # start would pay for base64 (and struct) before its first cell.
        import base64
        import binascii

        if isinstance(value, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(value)).decode("ascii")
        if isinstance(value, str):
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise TypeError("returned a str that is not base64") from None
            return value
        raise TypeError(f"returned {type(value).__name__}, expected bytes")
    if mime == "application/json" or mime.endswith("+json"):
        if isinstance(value, (str, bytes)):
            value = wire_json.decode(value)
        # A round trip: only plain JSON survives (no NaN, no custom objects).
        return wire_json.decode(wire_json.encode(value))
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        return str.__str__(value)
    raise TypeError(f"returned {type(value).__name__}, expected str")


def _size(value):
    if isinstance(value, str):
        return len(value)
    try:
        return len(
            wire_json.encode(value, ensure_ascii=True, separators=(", ", ": "), allow_nan=True)
        )
    except Exception:
        return MAX_BUNDLE_BYTES + 1


def _text_plain(obj):
    try:
        text = repr(obj)
    except Exception as exc:
        return f"<{_type_name(obj)} object; repr failed: {type(exc).__name__}>"
    return _bounded_text(text)


def _bounded_text(text):
    if type(text) is not str:
        text = str.__str__(text)
    if len(text) > MAX_TEXT_PLAIN_CHARS:
        text = text[:MAX_TEXT_PLAIN_CHARS] + "…"
    return text


def _accept(data, metadata, mime, value, md, owner, budget):
    try:
        encoded = _encode_value(mime, value)
    except (TypeError, ValueError) as exc:
        _note(f"{owner} for {mime} {exc}; skipped")
        return budget
    size = _size(encoded)
    if size > budget:
        _note(f"{owner} for {mime} is {size} bytes, over the display limit; skipped")
        return budget
    data[mime] = encoded
    if isinstance(md, dict) and md:
        try:
            metadata[mime] = wire_json.decode(wire_json.encode(md))
        except (TypeError, ValueError):
            pass
    return budget - size


def format_bundle(obj, include=None, exclude=None, text_plain=None):
    """``(data, metadata)`` for ``obj``: its rich reprs plus text/plain
    (``text_plain`` when the caller already has the repr)."""
    data, metadata = {}, {}
    budget = MAX_BUNDLE_BYTES
    name = _type_name(obj)
    wanted = lambda mime: (include is None or mime in include) and mime not in (exclude or ())
    if not isinstance(obj, type):
        bundle_method = _bound_method(obj, "_repr_mimebundle_")
        if bundle_method is not None:
            try:
                result = bundle_method(include=include, exclude=exclude)
            except Exception as exc:
                _note(f"{name}._repr_mimebundle_ raised {type(exc).__name__}: {exc}")
                result = None
            values, mds = _split(result)
            if values is not None and not isinstance(values, dict):
                _note(f"{name}._repr_mimebundle_ returned {type(values).__name__}, expected dict")
                values = None
            for mime, value in (values or {}).items():
                if isinstance(mime, str) and wanted(mime) and mime not in data:
                    md = (mds or {}).get(mime) if isinstance(mds, dict) else None
                    owner = f"{name}._repr_mimebundle_"
                    budget = _accept(data, metadata, mime, value, md, owner, budget)
        for mime, method_name in _METHODS:
            if mime in data or not wanted(mime):
                continue
            method = _bound_method(obj, method_name)
            if method is None:
                continue
            try:
                result = method()
            except Exception as exc:
                _note(f"{name}.{method_name} raised {type(exc).__name__}: {exc}; skipped")
                continue
            value, md = _split(result)
            if value is None:
                continue  # None means "no such representation", by convention
            budget = _accept(data, metadata, mime, value, md, f"{name}.{method_name}", budget)
    if "text/plain" not in data:
        data["text/plain"] = _text_plain(obj) if text_plain is None else _bounded_text(text_plain)
    return data, metadata


def publish(data, metadata=None, display_id=None, update=False, execute_result=False):
    """Send one bundle as this Cell's display frame (dropped outside a Cell).
    ``execute_result`` marks the Cell's last value (see displayhook)."""
    emit, cell_id = _state.emit, _state.cell_id
    if emit is None or cell_id is None:
        return
    size = sum(_size(value) for value in data.values())
    if _state.sent_bytes + size > MAX_CELL_DISPLAY_BYTES:
        if not _state.over_budget:
            _state.over_budget = True
            _note("this cell's displays passed 64 MB; later ones are dropped")
        return
    _state.sent_bytes += size
    frame = {
        "type": "display",
        "id": cell_id,
        "data": data,
        "metadata": metadata or {},
        "display_id": display_id,
        "update": bool(update),
    }
    if execute_result:
        frame["execute_result"] = True
    # What was printed so far goes first, so the host sees them in order.
    try:
        sys.stdout.flush()
    except Exception:
        pass
    emit(frame)


def show_rich(value):
    """The last value of a Cell as a display, if it has a rich repr.

    Returns whether a display was sent. Its text still goes to stdout (the
    caller prints it), so a text-only reader of the response misses nothing.
    """
    if not has_rich_repr(value):
        return False
    data, metadata = format_bundle(value)
    if len(data) <= 1:
        return False  # every rich repr failed or declined: text only
    publish(data, metadata)
    return True


class DisplayHandle:
    """A display that can be replaced later (``display(..., display_id=True)``)."""

    def __init__(self, display_id=None):
        self.display_id = display_id or os.urandom(16).hex()

    def __repr__(self):
        return f"<DisplayHandle display_id={self.display_id}>"

    def display(self, obj, **kwargs):
        display(obj, display_id=self.display_id, **kwargs)

    def update(self, obj, **kwargs):
        update_display(obj, display_id=self.display_id, **kwargs)


def display(
    *objs,
    include=None,
    exclude=None,
    metadata=None,
    display_id=None,
    raw=False,
    clear=False,
    update=False,
    **_ignored,
):
    """Show each object as a rich display of the running Cell.

    ``raw=True``: each object already is a MIME bundle (dict). With
    ``display_id=True`` a new id is made and a DisplayHandle returned.
    """
    handle = None
    if display_id is True:
        handle = DisplayHandle()
        display_id = handle.display_id
    elif display_id is not None:
        display_id = str(display_id)
        handle = DisplayHandle(display_id)
    if clear:
        clear_output(wait=True)
    for obj in objs:
        if raw:
            if not isinstance(obj, dict):
                raise TypeError("display(raw=True) takes MIME bundles (dicts)")
            data, md = {}, {}
            budget = MAX_BUNDLE_BYTES
            for mime, value in obj.items():
                if isinstance(mime, str):
                    budget = _accept(data, md, mime, value, None, "raw bundle", budget)
            data.setdefault("text/plain", "")
        else:
            data, md = format_bundle(obj, include, exclude)
        if isinstance(metadata, dict):
            md = {**md, **metadata}
        publish(data, md, display_id, update)
    return handle


def update_display(obj, *, display_id, **kwargs):
    """Replace the display shown under ``display_id``."""
    kwargs.pop("update", None)
    display(obj, display_id=display_id, update=True, **kwargs)


def clear_output(wait=False):
    """Ask the front end to clear this Cell's output (``wait``: on the next one)."""
    emit, cell_id = _state.emit, _state.cell_id
    if emit is None or cell_id is None:
        return
    try:
        sys.stdout.flush()
    except Exception:
        pass
    emit({"type": "clear_output", "id": cell_id, "wait": bool(wait)})


class _Payload:
    """Base of the small IPython-like wrappers below."""

    mime = "text/plain"

    def __init__(self, data=None, *, url=None, filename=None, metadata=None):
        if data is None and filename is not None:
            mode = "rb" if self.mime in _BINARY else "r"
            with open(filename, mode) as handle:
                data = handle.read()
        self.data = data
        self.url = url
        self.metadata = metadata

    def __repr__(self):
        return f"<{type(self).__name__} object>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        if self.metadata:
            return {self.mime: self.data}, {self.mime: self.metadata}
        return {self.mime: self.data}


class HTML(_Payload):
    mime = "text/html"


class Markdown(_Payload):
    mime = "text/markdown"


class SVG(_Payload):
    mime = "image/svg+xml"


class Latex(_Payload):
    mime = "text/latex"


class JSON(_Payload):
    mime = "application/json"


class Image(_Payload):
    """An image from bytes or a file; PNG unless ``format`` says otherwise."""

    def __init__(self, data=None, *, filename=None, format=None, metadata=None, **kwargs):
        fmt = (format or (filename.rsplit(".", 1)[-1] if filename else "png")).lower()
        self.mime = "image/jpeg" if fmt in ("jpg", "jpeg") else f"image/{fmt}"
        super().__init__(data, filename=filename, metadata=metadata)
