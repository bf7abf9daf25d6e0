"""matplotlib figures as PNG displays, as notebook inline backends do.

The worker forces the headless Agg backend (MPLBACKEND=Agg, which its
subprocesses inherit, harmlessly). When a Cell imports matplotlib,
``import_watch`` points its backend at ``mpl_inline`` (Agg rendering, plus
a ``show()`` that displays); at the end of every Cell the figures pyplot
still holds are displayed and closed, so the next Cell starts with none
(unless the Cell chose another backend itself). Nothing here imports
matplotlib: a Cell that never uses it pays nothing.
"""

import io
import sys

from openai4s.kernel.runtime import display, import_watch

INLINE_BACKEND = "module://openai4s.kernel.mpl_inline"


def force_headless(environ):
    """Agg for this process and its children, whatever the host said."""
    environ["MPLBACKEND"] = "Agg"


def _select_inline(matplotlib):
    try:
        matplotlib.rcParams["backend"] = INLINE_BACKEND
    except Exception as exc:  # an old matplotlib: plain Agg still works
        display._note(f"matplotlib inline backend unavailable ({exc}); using Agg")


def install():
    """Select the backend now if matplotlib is imported, else at its import."""
    import_watch.when_imported("matplotlib", _select_inline)


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
