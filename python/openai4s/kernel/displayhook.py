"""Showing the last value of a Cell (IPython's ``Out``).

The text repr goes to the Cell's stdout; a value with rich reprs
(``_repr_html_``, ``_repr_png_``, ...) is also sent as a display whose
bundle includes that text (display.show_rich).
"""

from openai4s.kernel import display


def show_result(value):
    """Show a Cell's last value; None shows nothing. Runs as user code (a
    slow or failing ``__repr__`` is the Cell's, and interruptible)."""
    if value is None:
        return
    print(repr(value))
    display.show_rich(value)
