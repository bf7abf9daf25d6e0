"""The worker's matplotlib backend: Agg rendering; ``show()`` displays.

Selected by ``figures`` (``module://openai4s.kernel.mpl_inline``) when a
Cell imports matplotlib. Outside a worker Cell a display is dropped, so a
stray use of this backend behaves like plain Agg.
"""

from matplotlib.backend_bases import FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg

from openai4s.kernel.runtime import figures

FigureCanvas = FigureCanvasAgg
FigureManager = FigureManagerBase


def show(*args, block=None, **kwargs):
    """Every open figure becomes a PNG display of the Cell, then closes."""
    figures.show_figures(close=True)
