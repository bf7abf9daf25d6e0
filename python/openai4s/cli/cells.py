"""Deciding when typed lines make a cell worth sending to the kernel.

The rules mirror the standard Python prompt, with one relaxation: the kernel
compiles a cell in `exec` mode, so a block may be followed by more statements
before the blank line that ends it.

* A first line that compiles (or is beyond repair) is a cell on its own.
* Otherwise the cell continues. It ends when the lines form one complete
  statement that needs no blank line (`x = (1,` then `2)`), when they can no
  longer compile, or at a blank line, unless that blank line sits inside an
  open bracket or string, where it is content.
"""

import codeop
import io
import tokenize
import warnings

COMPLETE = "complete"
INCOMPLETE = "incomplete"
INVALID = "invalid"


def completeness(source, symbol="exec"):
    """COMPLETE, INCOMPLETE or INVALID, as `codeop.compile_command` judges."""
    try:
        with warnings.catch_warnings():
            # Compiling a half-typed cell must not print SyntaxWarnings; the
            # kernel reports them once, when the cell really runs.
            warnings.simplefilter("ignore")
            code = codeop.compile_command(source, "<cell>", symbol)
    except (SyntaxError, OverflowError, ValueError):
        return INVALID
    return COMPLETE if code is not None else INCOMPLETE


def is_open(source):
    """True when `source` ends inside a bracket, a triple-quoted string or a
    backslash continuation: a following blank line belongs to the cell."""
    readline = io.StringIO(source + "\n").readline
    try:
        for _ in tokenize.generate_tokens(readline):
            pass
    except tokenize.TokenError:
        return True
    except SyntaxError:
        # Bad indentation and the like: closed, for the kernel to report.
        return False
    return False


class CellBuffer:
    """Collects lines until they form a cell.

    `push(line)` returns the cell's source when the line completes one, else
    None; `pending` says whether a continuation prompt is due.
    """

    def __init__(self):
        self._lines = []

    @property
    def pending(self):
        return bool(self._lines)

    def reset(self):
        self._lines = []

    def push(self, line):
        if not self._lines:
            return self._push_first(line)
        if not line.strip():
            return self._push_blank(line)
        self._lines.append(line)
        source = self.source()
        if completeness(source) == INVALID or completeness(source, "single") == COMPLETE:
            return self._take()
        return None

    def flush(self):
        """The partial cell at end of input (None if there is none)."""
        if not self._lines:
            return None
        return self._take()

    def source(self):
        return "\n".join(self._lines)

    def _push_first(self, line):
        if not line.strip():
            return None
        self._lines.append(line)
        if completeness(line) == INCOMPLETE:
            return None
        return self._take()

    def _push_blank(self, line):
        if is_open(self.source()):
            self._lines.append(line)
            return None
        return self._take()

    def _take(self):
        source = self.source()
        self._lines = []
        return source


def ready_to_run(text):
    """Whether Enter at the end of the editor's whole `text` runs it (else
    Enter starts a new line). The rules of CellBuffer, on a buffer that a
    paste may have filled with many lines at once (blank lines pasted
    inside a function are content: only Enter decides):

    * one line: runs unless codeop says it is incomplete;
    * a blank last line ends the cell, unless it sits inside a bracket or
      string;
    * an indented last line continues the block;
    * otherwise the cell runs once it compiles or can never compile.
    """
    if not text.strip():
        return True
    lines = text.split("\n")
    if len(lines) == 1:
        return completeness(text) != INCOMPLETE
    last = lines[-1]
    if not last.strip():
        return not is_open(text)
    if last[:1].isspace():
        return False
    return completeness(text) != INCOMPLETE


def next_indent(line):
    """The indentation a new line after `line` starts with: the same, one
    level deeper after a line that opens a block."""
    indent = line[: len(line) - len(line.lstrip())]
    return indent + "    " if line.rstrip().endswith(":") else indent
