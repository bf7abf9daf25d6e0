"""Showing the value of a Cell's last expression, as IPython's ``Out`` does.

The text repr goes to the Cell's stdout (display.show_rich adds a display
for rich reprs). The worker splits a Cell whose last statement is an expression (and not
ended by ``;``) into a body and that expression; the expression's value
comes here. Called while still in user code: a slow or interruptible
``__repr__`` belongs to the Cell.
"""

# The parser's node classes themselves, without ast.py's visitors and
# unparser on top (about 2 ms of every kernel's start, for isinstance checks
# and two constructors).
import _ast

from openai4s.kernel.runtime import display


def show_result(value, as_result=False) -> None:
    """Write ``repr(value)`` and a newline to the Cell's stdout; None shows
    nothing. A value with rich reprs (``_repr_html_``, ``_repr_png_``, ...)
    is also sent as a display whose bundle includes that text.

    ``as_result`` (asked for by the Jupyter kernel): the value goes out as
    one display marked ``execute_result`` (its text/plain included) and
    nothing is printed, as IPython's ``Out[n]``."""
    if value is None:
        return
    if as_result:
        # Taken first: a failing __repr__ is the Cell's error, as on stdout.
        text = repr(value)
        data, metadata = display.format_bundle(value, text_plain=text)
        display.publish(data, metadata, execute_result=True)
        return
    # print(): two writes, as the seed's single-expression echo always did.
    print(repr(value))
    display.show_rich(value)


def split_last_expression(tree: _ast.Module, code: str):
    """``(body, expression)`` of a parsed Cell: the statements to exec and
    the trailing expression to show, or ``(tree, None)`` when there is none,
    a trailing semicolon suppresses it, or it is a ``.write(...)``-style call
    (whose count of characters written nobody asked to see)."""
    if not tree.body or not isinstance(tree.body[-1], _ast.Expr):
        return tree, None
    last = tree.body[-1]
    if _followed_by_semicolon(code, last) or _writes_output(last.value):
        return tree, None
    body = _ast.Module(body=tree.body[:-1], type_ignores=tree.type_ignores)
    return body, _ast.Expression(body=last.value)


#: Methods whose result is only a count of what they wrote. A Cell that ends
#: with one (``f.write(text)``, ``path.write_text(text)``) is not asking to
#: see that number; the acceptance suite pins such a Cell's stdout.
_WRITE_METHODS = frozenset({"write", "write_text", "write_bytes", "writelines"})


def _writes_output(expression: _ast.expr) -> bool:
    return (
        isinstance(expression, _ast.Call)
        and isinstance(expression.func, _ast.Attribute)
        and expression.func.attr in _WRITE_METHODS
    )


def _followed_by_semicolon(code: str, node: _ast.stmt) -> bool:
    # end_col_offset counts UTF-8 bytes of its line; what follows the
    # expression is only a semicolon, blanks and a comment, or nothing.
    lines = code.split("\n")
    line = lines[node.end_lineno - 1].encode("utf-8", "surrogatepass")
    rest = line[node.end_col_offset :].decode("utf-8", "replace")
    rest = "\n".join([rest] + lines[node.end_lineno :])
    return rest.lstrip().startswith(";")
