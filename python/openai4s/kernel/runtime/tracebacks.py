"""Error text and line attribution for a failed Cell."""

from openai4s.kernel.runtime.protocol import MAX_OUTPUT_CHARS, TRUNCATION_MARKER


def skip_frames_of(tb, filename: str):
    """Drop the leading traceback entries that belong to ``filename``.

    The worker's own ``exec`` frame is not the researcher's code and would
    only push their first line down.
    """
    while tb is not None and tb.tb_frame.f_code.co_filename == filename:
        tb = tb.tb_next
    return tb


def one_line(exc: BaseException):
    """`Type: message` for an error that is a decision rather than a fault
    (a refused host call), else None. Its frames are the facade's, not the
    user's: a traceback through them would bury the one line that matters."""
    if not getattr(exc, "_openai4s_one_line", False):
        return None
    try:
        return f"{type(exc).__name__}: {exc}\n"
    except Exception:
        return None


def format_bounded(exc: BaseException, tb) -> str:
    """The standard traceback text, generated into a bounded buffer.

    Generation stops once the buffer is full; one extra piece is pulled only
    to learn whether a marker is warranted, so a runaway chain or a huge
    message is never rendered whole.
    """
    try:
        import traceback

        pieces = []
        room = MAX_OUTPUT_CHARS
        truncated = False
        formatted = traceback.TracebackException(type(exc), exc, tb).format()
        for piece in formatted:
            if room <= 0:
                truncated = True
                break
            if len(piece) > room:
                pieces.append(piece[:room])
                truncated = True
                break
            pieces.append(piece)
            room -= len(piece)
        text = "".join(pieces)
        return text + TRUNCATION_MARKER if truncated else text
    except Exception:
        return f"{type(exc).__name__}: <traceback could not be formatted>\n"


def cell_location(tb, tag: str):
    """(line, function) of the deepest frame that runs this Cell's source.

    Frames from library code, or from functions a previous Cell defined, are
    not this Cell's lines; with none of its own, both are None.
    """
    lineno = call = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == tag:
            lineno = tb.tb_lineno
            call = None if code.co_name == "<module>" else code.co_name
        tb = tb.tb_next
    return lineno, call
