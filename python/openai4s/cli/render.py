"""What the REPL prints around a cell's own output.

Cell stdout streams to our stdout as it arrives; everything else (the cell's
stderr, its error, `Interrupted`, the usage footer) goes to our stderr, so a
piped session's stdout carries only what the cells printed.
"""

#: Cells faster than this get no usage footer: quiet is the normal case.
FOOTER_AFTER_S = 1.0


def format_error(result):
    """The error text of a response with a trailing newline, or None."""
    error = result.get("error")
    if not error:
        return None
    return error if error.endswith("\n") else error + "\n"


#: The API's advice (KernelError messages) in the REPL's own words.
_REPL_WORDS = (
    ("call restart() again", "type %restart again"),
    ("call restart()", "type %restart"),
    ("call interrupt()", "press Ctrl-C"),
)


def repl_words(text):
    """`text` with the API's `call restart()` advice said as a REPL user acts."""
    for api, repl in _REPL_WORDS:
        text = text.replace(api, repl)
    return text


def format_usage(usage):
    """A one-line footer for a slow cell, or None for a quick one (or when
    the response carries no usage, as after a worker death)."""
    if not usage:
        return None
    wall = usage.get("wall_s")
    if not isinstance(wall, (int, float)) or wall <= FOOTER_AFTER_S:
        return None
    parts = [f"wall {wall:.2f} s"]
    cpu = usage.get("cpu_s")
    if isinstance(cpu, (int, float)):
        parts.append(f"cpu {cpu:.2f} s")
    rss = usage.get("peak_rss_kb")
    if isinstance(rss, (int, float)) and rss > 0:
        parts.append(f"peak RSS {rss / 1024:.1f} MB")
    return "[" + ", ".join(parts) + "]\n"


class Console:
    """Our two output streams. In a terminal both land on one screen, so it
    remembers whether the cursor is at the start of a line and begins each
    message on a fresh one (after `print(..., end="")` or an echoed `^C`)."""

    def __init__(self, out, err, interactive):
        self.out = out
        self.err = err
        self.interactive = interactive
        self._at_line_start = True
        self._after_echo = False

    def chunk(self, text):
        """Cell stdout, written verbatim as it streams (only moved off the
        line of an echoed ^C)."""
        if not text:
            return
        if self._after_echo:
            self.fresh_line()
        self.out.write(text)
        self.out.flush()
        self._at_line_start = text.endswith("\n")

    def message(self, text):
        """REPL or cell diagnostics, on stderr."""
        if not text:
            return
        self.fresh_line()
        self.out.flush()
        self.err.write(text)
        self.err.flush()
        self._at_line_start = text.endswith("\n")

    def info(self, text):
        """REPL output the user asked for (`%vars`, `%help`), on stdout."""
        self.fresh_line()
        self.chunk(text)

    def cursor_moved(self):
        """The terminal printed something we did not write (an echoed ^C)."""
        self._at_line_start = False
        self._after_echo = True

    def fresh_line(self):
        self._after_echo = False
        if self.interactive and not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True
