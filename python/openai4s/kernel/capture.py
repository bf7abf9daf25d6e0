"""Bounded capture of a Cell's stdout/stderr, and live stdout streaming."""

import io

from openai4s.kernel.protocol import (
    CHUNK_CHARS,
    MAX_OUTPUT_CHARS,
    TRUNCATION_MARKER,
    dumps,
    json_string,
)


def cap_text(text: str) -> str:
    """Head-cap an already materialised string, with at most one marker."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return text[:MAX_OUTPUT_CHARS] + TRUNCATION_MARKER


class BoundedBuffer(io.StringIO):
    """A StringIO (Cell code may rely on that surface) that keeps the head.

    Memory is bounded at the producer: at most the cap plus the one string
    being handed in, however much a Cell prints.
    """

    # Libraries consult sys.stdout.encoding; StringIO reports None.
    encoding = "utf-8"

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        super().__init__()
        self._limit = limit
        self._length = 0
        self._final = None
        self.truncated = False

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"string argument expected, got {type(s).__name__!r}")
        self._retain(s)
        # Always the length handed in: a short count makes print() retry.
        return len(s)

    def _retain(self, s: str) -> None:
        room = self._limit - self._length
        if len(s) <= room:
            super().write(s)
            self._length += len(s)
            return
        if room > 0:
            super().write(s[:room])
            self._length = self._limit
        self.truncated = True

    def close(self) -> None:
        # A Cell may close sys.stdout; what it printed is still its output.
        if not self.closed:
            self._final = self.getvalue()
        super().close()

    def captured(self) -> str:
        text = self._final if self.closed else self.getvalue()
        if self.truncated:
            text += TRUNCATION_MARKER
        return text


class StreamingStdout(BoundedBuffer):
    """stdout that also streams ``stdout_chunk`` frames for its Cell.

    Each frame holds at most CHUNK_CHARS characters and the whole stream stops
    after MAX_OUTPUT_CHARS, followed by one marker chunk, so a single huge
    print can never put an unbounded line on the protocol pipe.
    """

    def __init__(self, cell_id, write_line) -> None:
        super().__init__()
        # The frame is assembled here rather than serialised as a dict: a
        # loop of prints is one frame per write, and this is its whole cost.
        self._head = '{"type":"stdout_chunk","id":' + dumps(cell_id) + ',"text":'
        self._write_line = write_line
        self._streamed = 0
        self._marker_sent = False

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"string argument expected, got {type(s).__name__!r}")
        if s:
            self._retain(s)
            self._stream(s)
        return len(s)

    def _stream(self, s: str) -> None:
        budget = MAX_OUTPUT_CHARS - self._streamed
        if budget > 0:
            piece = s[:budget] if len(s) > budget else s
            # Counted before sending: a deferred SIGINT may raise out of a
            # frame write, and the next write must not resend this piece.
            self._streamed += len(piece)
            for start in range(0, len(piece), CHUNK_CHARS):
                self._send(piece[start : start + CHUNK_CHARS])
        if self._streamed >= MAX_OUTPUT_CHARS and not self._marker_sent:
            self._marker_sent = True
            self._send(TRUNCATION_MARKER)

    def _send(self, text: str) -> None:
        self._write_line(self._head + json_string(text) + "}\n")
