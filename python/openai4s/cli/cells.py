"""Deciding when lines read from a pipe or a file make a cell.

Piped input is split as a Python file reads, so an ordinary script runs
as written (blank lines inside a function are content):

* Each top-level statement is a cell. A simple one (`x = 1`, or a bracketed
  statement once it closes) runs as soon as it is complete, so a program
  feeding the REPL line by line gets its answers as it goes.
* A compound statement (`def`, `for`, `if`, `with`, a decorated function...)
  runs when the next unindented line arrives that does not continue it
  (`else:`, `elif`, `except`, `finally`, a comment), or at the end of input.
  Blank lines inside it are kept.
* A line that can never compile is sent at once for the kernel to report;
  a comment between statements is dropped.

The terminal's editor decides differently (a blank line ends a block there):
see `ready_to_run` below.
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


#: Unindented words that continue the compound statement before them.
_CONTINUATIONS = frozenset({"else", "elif", "except", "finally", "case"})
#: First words of a compound statement (`match` only with a trailing colon).
_COMPOUND = frozenset({"def", "class", "for", "while", "if", "with", "try", "async"})


def _first_word(line):
    word = ""
    for char in line.strip():
        if not (char.isalnum() or char == "_"):
            break
        word += char
    return word


def _is_compound(first_line):
    word = _first_word(first_line)
    if word == "match":
        return first_line.rstrip().endswith(":")
    return word in _COMPOUND or first_line.lstrip().startswith("@")


def _continues_block(line):
    return line[:1].isspace() or line.startswith("#") or _first_word(line) in _CONTINUATIONS


class CellBuffer:
    """Collects piped lines until they form a cell (the rules above).

    `push(line)` returns a cell's source when the line completes one, else
    None; a line that both ends a block and is a cell itself leaves that
    second cell to `take_ready()`. `pending` says whether lines are held.
    """

    def __init__(self):
        self._lines = []
        self._ready = []

    @property
    def pending(self):
        return bool(self._lines)

    def reset(self):
        self._lines = []
        self._ready = []

    def push(self, line):
        if not self._lines:
            return self._push_first(line)
        source = self.source()
        if not _is_compound(self._lines[0]):
            # A simple statement held open by a bracket, string or backslash.
            self._lines.append(line)
            return None if is_open(self.source()) else self._take()
        if not line.strip() or _continues_block(line) or is_open(source):
            self._lines.append(line)
            return None
        if completeness(source) == INCOMPLETE:
            self._lines.append(line)  # e.g. the function under a decorator
            return None
        block = self._take()
        following = self._push_first(line)
        if following is not None:
            self._ready.append(following)
        return block

    def take_ready(self):
        """A further cell the last push completed, or None."""
        return self._ready.pop(0) if self._ready else None

    def flush(self):
        """The partial cell at end of input (None if there is none)."""
        return self._take() if self._lines else None

    def source(self):
        return "\n".join(self._lines)

    def _push_first(self, line):
        if not line.strip() or line.lstrip().startswith("#"):
            return None  # a comment alone is not worth a cell
        self._lines.append(line)
        if completeness(line) == INCOMPLETE:
            return None
        return self._take()

    def _take(self):
        # Blank lines between a block and the next statement are not code.
        while self._lines and not self._lines[-1].strip():
            self._lines.pop()
        source = self.source()
        self._lines = []
        return source or None


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
