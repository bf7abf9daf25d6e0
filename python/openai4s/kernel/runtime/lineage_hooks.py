"""Lineage wrappers for numpy, pandas and matplotlib, applied without
importing any of them.

A module already imported is wrapped at install; otherwise ``import_watch``
wraps it right after its first import. That covers "import, plot and save in
one Cell" as well as an import in an earlier Cell. A module whose loader
cannot be wrapped imports normally, untracked.
"""

import functools
import os
import sys

from openai4s.kernel.runtime import import_watch, provenance_tags

_WRAPPED = "_openai4s_wrapped"
_READER_SOURCE_KEYWORDS = ("filepath_or_buffer", "path", "file", "path_or_buf", "io")


def _path_target(value):
    return value if isinstance(value, (str, bytes, os.PathLike)) else None


def _wrap_reader(owner, name):
    real = getattr(owner, name, None)
    if real is None or getattr(real, _WRAPPED, None) is not None:
        return

    @functools.wraps(real)
    def reader(*args, **kwargs):
        result = real(*args, **kwargs)
        source = _first_or(kwargs, args, 0, *_READER_SOURCE_KEYWORDS)
        return provenance_tags.tag_read_result(result, source)

    setattr(reader, _WRAPPED, real)
    setattr(owner, name, reader)


def _wrap_writer(owner, name, target_of):
    real = getattr(owner, name, None)
    if real is None or getattr(real, _WRAPPED, None) is not None:
        return

    @functools.wraps(real)
    def writer(*args, **kwargs):
        result = real(*args, **kwargs)
        try:
            target, data = target_of(args, kwargs)
            tags = provenance_tags.raw_tags(data) if target is not None else None
            if tags:
                provenance_tags.record_write(target, tags)
        except Exception:
            pass
        return result

    setattr(writer, _WRAPPED, real)
    setattr(owner, name, writer)


def _wrap_propagating(owner, name, carriers):
    real = getattr(owner, name, None)
    if real is None or getattr(real, _WRAPPED, None) is not None:
        return

    @functools.wraps(real)
    def method(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        # Only frames and series carry tags on: a scalar cell would churn the
        # side table for nothing.
        if isinstance(result, carriers) and not provenance_tags.is_off():
            provenance_tags.propagate(result, self)
        return result

    setattr(method, _WRAPPED, real)
    setattr(owner, name, method)


def _unwrap(owner, name) -> None:
    current = getattr(owner, name, None)
    real = getattr(current, _WRAPPED, None)
    if real is not None:
        setattr(owner, name, real)


def _first_or(kwargs, args, index, *names):
    for key in names:
        if key in kwargs:
            return kwargs[key]
    return args[index] if len(args) > index else None


def _savefig_target(args, kwargs):
    figure = args[0]
    return _path_target(_first_or(kwargs, args, 1, "fname", "path_or_buf")), figure


def _numpy_save_target(args, kwargs):
    target = _path_target(_first_or(kwargs, args, 0, "file"))
    if target is not None:
        # np.save appends ".npy" to a path that lacks it.
        target = os.fsdecode(os.fspath(target))
        if not target.endswith(".npy"):
            target += ".npy"
    return target, _first_or(kwargs, args, 1, "arr")


def _method_target(args, kwargs):
    return _path_target(_first_or(kwargs, args, 1, "path_or_buf", "path")), args[0]


def _numpy(module) -> None:
    _wrap_reader(module, "load")
    _wrap_writer(module, "save", _numpy_save_target)


def _pandas(module) -> None:
    for name in ("read_csv", "read_parquet", "read_json", "read_pickle", "read_excel"):
        _wrap_reader(module, name)
    classes = tuple(
        cls
        for cls in (getattr(module, "DataFrame", None), getattr(module, "Series", None))
        if isinstance(cls, type)
    )
    for cls in classes:
        for name in ("to_csv", "to_parquet", "to_json", "to_pickle"):
            _wrap_writer(cls, name, _method_target)
        _wrap_propagating(cls, "__getitem__", classes)


def _matplotlib_figure(module) -> None:
    figure = getattr(module, "Figure", None)
    if figure is not None:
        _wrap_writer(figure, "savefig", _savefig_target)


def _unwrap_all() -> None:
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        _unwrap(numpy, "load")
        _unwrap(numpy, "save")
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        for name in ("read_csv", "read_parquet", "read_json", "read_pickle", "read_excel"):
            _unwrap(pandas, name)
        for cls_name in ("DataFrame", "Series"):
            cls = getattr(pandas, cls_name, None)
            for name in ("to_csv", "to_parquet", "to_json", "to_pickle", "__getitem__"):
                if cls is not None:
                    _unwrap(cls, name)
    figure = sys.modules.get("matplotlib.figure")
    if figure is not None and getattr(figure, "Figure", None) is not None:
        _unwrap(figure.Figure, "savefig")


_TARGETS = {"numpy": _numpy, "pandas": _pandas, "matplotlib.figure": _matplotlib_figure}


def install() -> None:
    for name, wrap in _TARGETS.items():
        import_watch.when_imported(name, wrap)


def uninstall() -> None:
    for name, wrap in _TARGETS.items():
        import_watch.forget(name, wrap)
    _unwrap_all()
