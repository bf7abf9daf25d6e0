"""Run a function on a module the moment it is first imported, without
importing it first.

The worker adjusts a few stdlib modules (``linecache`` learns the Cells'
sources, ``getpass`` asks the host's caller, ``json.loads`` carries lineage)
and watches numpy, pandas and matplotlib for lineage. Importing them all at
start would cost every kernel several milliseconds for modules most Cells
never touch, so the adjustment waits for the import instead.

One finder at the front of ``sys.meta_path`` answers only for the watched
names: it resolves the spec through the finders behind it and swaps in a
loader that runs the real one (restoring it on the module and spec before
the body runs) and then the callbacks. A module whose loader cannot be
wrapped imports normally, unadjusted.
"""

import sys


class _WatchingLoader:
    """Runs the real loader, then the callbacks still waiting for the module.

    Everything else (``get_data``, ``get_code``, ...) is the real loader's:
    ``pkgutil`` and ``runpy`` ask a spec's loader for more than a body."""

    def __init__(self, real, spec) -> None:
        self._real = real
        self._spec = spec

    def __getattr__(self, name):
        # Through __dict__: a half-built copy must not recurse into here.
        real = self.__dict__.get("_real")
        if real is None:
            raise AttributeError(name)
        return getattr(real, name)

    def create_module(self, spec):
        create = getattr(self._real, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module) -> None:
        # The module must look exactly as if imported normally (reload and
        # introspection use these), so the real loader goes back first.
        self._spec.loader = self._real
        try:
            module.__loader__ = self._real
        except Exception:
            pass
        self._real.exec_module(module)
        # Only a body that ran uses the watch up: a spec looked up and never
        # loaded (importlib.util.find_spec), or an import that failed, leaves
        # the callbacks waiting for the next import.
        for callback in _watch.pending.pop(self._spec.name, ()):
            try:
                callback(module)
            except Exception:
                pass


class _ImportWatch:
    """Waits for the first import of each watched name.

    Once in ``sys.meta_path`` it stays there: the import system walks that
    list live, and a finder that removed itself in one thread's import could
    make another thread's import skip a finder. Idle, it costs one dict
    lookup per import."""

    _openai4s_import_watch = True

    def __init__(self) -> None:
        self.pending = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.pending:
            return None
        spec = self._spec_behind(fullname, path, target)
        if spec is None:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        spec.loader = _WatchingLoader(loader, spec)
        return spec

    def _spec_behind(self, fullname, path, target):
        finders = sys.meta_path
        try:
            start = finders.index(self) + 1
        except ValueError:
            start = 0
        for finder in finders[start:]:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
        return None


_watch = _ImportWatch()


def when_imported(name, callback) -> None:
    """``callback(module)`` now if ``name`` is imported, else right after its
    first import. A callback's exception is swallowed: adjusting a module
    must never break the import that loaded it."""
    module = sys.modules.get(name)
    if module is not None:
        try:
            callback(module)
        except Exception:
            pass
        return
    callbacks = _watch.pending.setdefault(name, [])
    if callback not in callbacks:
        callbacks.append(callback)
    if _watch not in sys.meta_path:
        sys.meta_path.insert(0, _watch)


def forget(name, callback) -> None:
    """Stop waiting to run ``callback`` on ``name``."""
    callbacks = _watch.pending.get(name)
    if callback in (callbacks or ()):
        callbacks.remove(callback)
        if not callbacks:
            del _watch.pending[name]
