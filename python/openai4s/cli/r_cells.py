"""Deciding when typed lines make an R cell (the `--lang r` REPL).

R has no `codeop`; R's own console continues a line while an expression is
open. This mirrors that closely enough for a terminal: a cell continues while
a bracket or string is open or the line ends with a binary operator or a
comma, and a blank line always ends it (R reports whatever is left).
"""

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CONTINUING_TAILS = ("+", "-", "*", "/", "^", ",", "|", "&", "<-", "=", "~", "%", "|>")


def is_open(source):
    """True while `source` ends inside a bracket or a string, or after an
    operator that needs its right-hand side."""
    depth = 0
    quote = None
    escaped = False
    for line in source.split("\n"):
        for index, char in enumerate(line):
            if quote is not None:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == quote:
                    quote = None
                continue
            if char == "#":
                break  # a comment runs to the end of its line
            if char in "\"'`":
                quote = char
            elif char in _OPENERS:
                depth += 1
            elif char in _OPENERS.values():
                depth -= 1
    if quote is not None or depth > 0:
        return True
    last = source.rstrip().split("\n")[-1].split("#", 1)[0].rstrip()
    return last.endswith(_CONTINUING_TAILS)


class RCellBuffer:
    """CellBuffer's interface (`push`, `flush`, `pending`, `reset`) for R."""

    def __init__(self):
        self._lines = []

    @property
    def pending(self):
        return bool(self._lines)

    def reset(self):
        self._lines = []

    def push(self, line):
        if not self._lines and not line.strip():
            return None
        if self._lines and not line.strip() and not is_open("\n".join(self._lines)):
            return self._take()
        self._lines.append(line)
        if not line.strip():
            return self._take()
        if is_open("\n".join(self._lines)):
            return None
        return self._take()

    def flush(self):
        return self._take() if self._lines else None

    def _take(self):
        source = "\n".join(self._lines).rstrip("\n")
        self._lines = []
        return source if source.strip() else None
