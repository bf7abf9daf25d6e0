"""Is a piece of code a complete cell? (Jupyter's is_complete_request.)

Answered in the worker because the answer depends on the worker's own
Python grammar. Semantics are `codeop`'s, which is what an interactive
prompt uses: a statement that compiles is complete (unless it opens a block
that a blank line has not closed yet), one `codeop` says needs more input is
incomplete, and a syntax error is invalid. Nothing is executed and the
namespace is not touched.
"""

import codeop
import warnings

_INDENT = "    "


def _indent_for(code):
    """The indentation a continuation line should get."""
    last = code.rstrip("\n").split("\n")[-1] if code.strip() else ""
    current = last[: len(last) - len(last.lstrip())]
    return current + _INDENT if last.rstrip().endswith(":") else current


def is_complete(code):
    """{"status": complete|incomplete|invalid, "indent": str (incomplete only)}."""
    if not isinstance(code, str):
        return {"status": "invalid"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compiled = codeop.compile_command(code, "<cell>", "exec")
        except (SyntaxError, OverflowError, ValueError, MemoryError):
            return {"status": "invalid"}
    if compiled is None:
        return {"status": "incomplete", "indent": _indent_for(code)}
    lines = code.rstrip(" \t").split("\n")
    # An indented block compiles before it is closed; at a prompt it still
    # wants a blank line (codeop's own rule for "for x in y:\n  pass").
    if len(lines) > 1 and lines[-1].strip() and lines[-1][:1] in (" ", "\t"):
        return {"status": "incomplete", "indent": _indent_for(code)}
    return {"status": "complete"}


def reply(request):
    """The is_complete_reply frame for one is_complete request frame."""
    frame = {"type": "is_complete_reply", "id": request.get("id")}
    frame.update(is_complete(request.get("code", "")))
    return frame
