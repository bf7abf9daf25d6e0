"""matplotlib figures as PNG displays, as notebook inline backends do.

The worker forces the headless Agg backend (MPLBACKEND=Agg, which its
subprocesses inherit, harmlessly). When a Cell imports matplotlib, a
one-shot import hook points its backend at ``mpl_inline`` (Agg rendering,
plus a ``show()`` that displays); at the end of every Cell the figures
pyplot still holds are displayed and closed, so the next Cell starts with
none (unless the Cell chose another backend itself). Nothing here imports matplotlib: a Cell that never uses it pays
nothing.
"""

import io
import sys

from openai4s.kernel.runtime import display

INLINE_BACKEND = "module://openai4s.kernel.mpl_inline"


def force_headless(environ):
    """Agg for this process and its children, whatever the host said."""
    environ["MPLBACKEND"] = "Agg"


class _MatplotlibImportHook:
    """After ``import matplotlib`` runs, select the inline backend.

    A meta path finder by shape (``find_spec``), not by subclassing
    ``importlib.abc.MetaPathFinder``: importing that module costs a fresh
    worker about 20 ms (it pulls in importlib.resources and tempfile)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "matplotlib":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module):
            original(module)
            _select_inline(module)

        # A per-spec loader proxy: the real loader is shared by other specs.
        spec.loader = _LoaderProxy(loader, exec_module)
        return spec


class _LoaderProxy:
    def __init__(self, loader, exec_module):
        self._loader = loader
        self.exec_module = exec_module

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _select_inline(matplotlib):
    try:
        matplotlib.rcParams["backend"] = INLINE_BACKEND
    except Exception as exc:  # an old matplotlib: plain Agg still works
        display._note(f"matplotlib inline backend unavailable ({exc}); using Agg")


_hook = _MatplotlibImportHook()


def install():
    """Arm the import hook (or select the backend now, if already imported)."""
    module = sys.modules.get("matplotlib")
    if module is not None:
        _select_inline(module)
        return
    if _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)


def _figure_managers():
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None or "matplotlib.pyplot" not in sys.modules:
        return []
    try:
        return list(helpers.Gcf.get_all_fig_managers())
    except Exception:
        return []


def figure_bundle(figure):
    """``(data, metadata)`` of one figure rendered as PNG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    png = buffer.getvalue()
    data = {"image/png": png}
    try:
        width, height = figure.get_size_inches() * figure.dpi
        metadata = {"image/png": {"width": int(width), "height": int(height)}}
    except Exception:
        metadata = {}
    return data, metadata


def show_figures(close=True):
    """Display every figure pyplot holds (then close them); returns the count."""
    shown = 0
    for manager in _figure_managers():
        figure = getattr(getattr(manager, "canvas", None), "figure", None)
        if figure is None:
            continue
        try:
            raw, metadata = figure_bundle(figure)
        except Exception as exc:
            display._note(
                f"figure {manager.num} could not be rendered: {type(exc).__name__}: {exc}"
            )
            continue
        data = {}
        budget = display.MAX_BUNDLE_BYTES
        budget = display._accept(data, {}, "image/png", raw["image/png"], None, "figure", budget)
        if not data:
            continue
        data["text/plain"] = display._text_plain(figure)
        display.publish(data, metadata)
        shown += 1
    if close:
        close_figures()
    return shown


def inline_active():
    """Whether pyplot is loaded and drawing through the inline backend (a
    Cell that chose another backend, e.g. ``matplotlib.use('Agg')``, keeps
    its figures open, as the figure-leak guard reports them)."""
    if "matplotlib.pyplot" not in sys.modules:
        return False
    try:
        backend = dict.__getitem__(sys.modules["matplotlib"].rcParams, "backend")
    except Exception:
        return False
    return isinstance(backend, str) and backend.lower() == INLINE_BACKEND.lower()


def cell_ended(show=True):
    """End of a Cell under the inline backend: show (or, for an
    interrupted Cell, just drop) the figures it left open."""
    if not inline_active():
        return
    if show:
        show_figures(close=True)
    else:
        close_figures()


def close_figures():
    if "matplotlib.pyplot" not in sys.modules:
        return
    try:
        sys.modules["matplotlib.pyplot"].close("all")
    except Exception:
        pass
