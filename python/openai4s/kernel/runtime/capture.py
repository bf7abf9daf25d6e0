"""Bounded capture of a Cell's stdout/stderr, and live stdout streaming.

With a SpillFile, a stream that passes the cap also goes, whole, to a file
in the workspace, and the truncation marker names that file. The file is
completed by ``finish_spill()``, which the worker calls once the response
is sent (see spill.py).
"""

import codecs
import io
import os

from openai4s.kernel.runtime import threads
from openai4s.kernel.runtime.forks import forks, in_forked_child
from openai4s.kernel.runtime.protocol import (
    CHUNK_CHARS,
    MAX_OUTPUT_CHARS,
    TRUNCATION_MARKER,
    dumps,
    json_string_bytes,
)


# A child forked by a Cell inherits the Cell's stdout and the protocol pipe.
# Its output still streams, so the host shows it live, but (1) under a
# stream id of its own, so the host never takes it for the Cell's result,
# and (2) once anything has forked, every chunk frame is small enough for
# one atomic pipe write, so frames of concurrent writers never splice.
#: Chunk text per frame once a fork happened: at six bytes per character
#: at worst plus the frame's head, each frame stays within PIPE_BUF (4096
#: bytes), which POSIX writes to a pipe atomically.
_ATOMIC_CHUNK_CHARS = 600


def cap_text(text: str) -> str:
    """Head-cap an already materialised string, with at most one marker."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return text[:MAX_OUTPUT_CHARS] + TRUNCATION_MARKER


def spill_marker(path: str) -> str:
    """The marker of a stream whose full text is in ``path``."""
    return TRUNCATION_MARKER[:-1] + f"; full output in {path})"


class BytesView(io.BufferedIOBase):
    """``sys.stdout.buffer`` of a Cell: bytes written here are decoded
    (UTF-8, invalid bytes replaced) and join the text stream in order."""

    def __init__(self, text_stream) -> None:
        super().__init__()
        self._text = text_stream
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        data = bytes(memoryview(data))
        text = self._decoder.decode(data)
        if text:
            self._text.write(text)
        return len(data)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self._text.fileno()


class BoundedBuffer(io.StringIO):
    """A StringIO (Cell code may rely on that surface) that keeps the head.

    Memory is bounded at the producer: at most the cap plus the one string
    being handed in, however much a Cell prints.

    ``fd`` is the descriptor that native writes to this stream use (the
    Cell's fd 1 or 2), reported by ``fileno()`` so that libraries handing it
    to a child or to faulthandler reach the same output. ``before_write`` is
    called before each write (the worker's native-output drain, which keeps
    a child's earlier output ahead of this text).
    """

    # Libraries consult sys.stdout.encoding; StringIO reports None.
    encoding = "utf-8"

    def __init__(self, limit: int = MAX_OUTPUT_CHARS, spill=None, fd=None, before_write=None):
        super().__init__()
        self._limit = limit
        self._length = 0
        self._final = None
        self._spill = spill
        self._fd = fd
        self._before_write = before_write
        self._bytes_view = None
        self.truncated = False

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"string argument expected, got {type(s).__name__!r}")
        if self._before_write is not None:
            self._before_write()
        self._retain(s)
        # Always the length handed in: a short count makes print() retry.
        return len(s)

    def write_native(self, s: str) -> None:
        """Text that arrived on this stream's descriptor (never drains)."""
        self._retain(s)

    def fileno(self) -> int:
        if self._fd is None:
            return super().fileno()  # io.UnsupportedOperation, as StringIO
        return self._fd

    @property
    def buffer(self):
        view = self._bytes_view
        if view is None or view.closed:
            # A library that wrapped and then dropped the view closed it.
            view = self._bytes_view = BytesView(self)
        return view

    def _retain(self, s: str) -> None:
        room = self._limit - self._length
        if len(s) <= room:
            super().write(s)
            self._length += len(s)
            return
        if room > 0:
            super().write(s[:room])
            self._length = self._limit
        else:
            room = 0
        spill = self._spill
        if not self.truncated:
            self.truncated = True
            if spill is not None and spill.start(self._text()):
                spill.write(s[room:])
        elif spill is not None:
            spill.write(s)

    def _text(self) -> str:
        return self._final if self.closed else self.getvalue()

    @property
    def spill_path(self):
        """Workspace-relative path of the spill file, or None."""
        return None if self._spill is None else self._spill.path

    def end_spill(self) -> None:
        """The Cell is over: later writes no longer reach the spill file."""
        if self._spill is not None:
            self._spill.end()

    def finish_spill(self) -> None:
        """Complete the spill file on disk (after the response is sent)."""
        if self._spill is not None:
            self._spill.finish()

    def close(self) -> None:
        # A Cell may close sys.stdout; what it printed is still its output.
        if not self.closed:
            self._final = self.getvalue()
        super().close()

    def captured(self) -> str:
        text = self._text()
        if self.truncated:
            path = self.spill_path
            if path is None:
                return text + TRUNCATION_MARKER
            # The head gives up room for the file's name, so the text stays
            # within the cap plus the plain marker's length (the frame bound).
            marker = spill_marker(path)
            keep = self._limit + len(TRUNCATION_MARKER) - len(marker)
            return text[: max(keep, 0)] + marker
        return text


class StreamingStdout(BoundedBuffer):
    """stdout that also streams ``stdout_chunk`` frames for its Cell.

    Each frame holds at most CHUNK_CHARS characters and the whole stream stops
    after MAX_OUTPUT_CHARS, followed by one marker chunk, so a single huge
    print can never put an unbounded line on the protocol pipe.

    ``write_line`` receives each frame as one UTF-8 line (bytes). Frames
    carry ``stream`` (unique per Cell in this worker) and ``seq`` (0, 1, ...),
    so the host can tell this stream's chunks from a stale buffer's or a
    forked child's, and notice one that went missing.
    """

    def __init__(
        self, cell_id, write_line, spill=None, stream=0, fd=None, before_write=None, unbounded=False
    ):
        super().__init__(spill=spill, fd=fd, before_write=before_write)
        # A background job's cell (the host keeps a bounded window of it):
        # the stream goes on past MAX_OUTPUT_CHARS, so the window's tail
        # keeps moving; what is retained for the response stays capped.
        self._unbounded = unbounded
        # The frame is assembled here rather than serialised as a dict: a
        # loop of prints is one frame per write, and this is its whole cost.
        head = '{"type":"stdout_chunk","id":' + dumps(cell_id) + ',"stream":' + dumps(stream)
        self._head = (head + ',"seq":').encode("utf-8", "replace")
        self._stream_id = stream
        self._seq = 0
        self._write_line = write_line
        self._streamed = 0
        self._marker_sent = False
        # Whether the streamed chunks spell exactly what was retained: true
        # until a write is cut short (a stop raised mid-stream), two writes
        # overlap (threads) and could be ordered differently in the two
        # copies, or the Cell rewinds the buffer (seek/truncate).
        self._in_order = True
        self._writing = threads.Lock()

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"string argument expected, got {type(s).__name__!r}")
        if type(s) is not str:
            # A subclass may misreport its length; chunking needs the truth.
            s = str.__str__(s)
        if not s:
            return 0
        if self._before_write is not None:
            self._before_write()
        if not self._writing.acquire(blocking=False):
            self._in_order = False
            self._retain(s)
            self._stream(s)
            return len(s)
        try:
            self._retain(s)
            self._stream(s)
        except BaseException:
            self._in_order = False
            raise
        finally:
            self._writing.release()
        return len(s)

    def write_native(self, s: str) -> None:
        # From the native-output pump: waits for a write in flight instead
        # of declaring the stream out of order.
        with self._writing:
            try:
                self._retain(s)
                self._stream(s)
            except BaseException:
                self._in_order = False
                raise

    def seek(self, *args):
        self._in_order = False
        return super().seek(*args)

    def truncate(self, *args):
        self._in_order = False
        return super().truncate(*args)

    def response_text(self):
        """``(stdout, declaration, captured)`` for the response frame.

        The host already holds every streamed chunk, so when they spell
        the captured text it is not sent a second time: ``stdout`` is ""
        and ``declaration`` (``{"stream", "chunks", "head_trim"}``) lets the
        host check that it has exactly this stream's chunks, in order, and
        otherwise ask for ``captured`` (a ``stdout_request``). After a spill
        the captured head is shorter than the streamed one by a few
        characters (room for the file's name in the marker): ``head_trim``
        code points are cut before the marker. ``declaration`` is None when
        stdout is sent as is.
        """
        if not self._writing.acquire(blocking=False):
            # A write is in flight (another thread): its chunk may follow
            # the response, so the chunks cannot be trusted to be complete.
            captured = self.captured()
            return captured, None, captured
        try:
            captured = self.captured()
            # A buffer outliving its Cell keeps streaming under its old id
            # (spec §4.6); those chunks come after the declared count.
            if not self._in_order or self._marker_sent != self.truncated or not self._seq:
                return captured, None, captured
            trim = 0
            path = self.spill_path
            if self.truncated and path is not None:
                marker = spill_marker(path)
                keep = max(self._limit + len(TRUNCATION_MARKER) - len(marker), 0)
                trim = self._limit - keep
            declaration = {"stream": self._stream_id, "chunks": self._seq, "head_trim": trim}
            return "", declaration, captured
        finally:
            self._writing.release()

    def _stream(self, s: str) -> None:
        if self._unbounded and not s:
            return
        budget = len(s) if self._unbounded else MAX_OUTPUT_CHARS - self._streamed
        if budget > 0:
            piece = s[:budget] if len(s) > budget else s
            # Counted before sending: a deferred SIGINT may raise out of a
            # frame write, and the next write must not resend this piece.
            self._streamed += len(piece)
            # Once this worker has forked, a child may write to the same
            # pipe: frames small enough for one atomic write never splice.
            size = CHUNK_CHARS if not forks[0] else _ATOMIC_CHUNK_CHARS
            if len(piece) <= size:
                self._send(piece)
            else:
                for start in range(0, len(piece), size):
                    self._send(piece[start : start + size])
            if len(s) <= budget:
                return
        # Only once something is actually dropped: by then any spill file
        # exists (_retain ran first), so the marker can name it.
        if not self._marker_sent:
            self._marker_sent = True
            path = self.spill_path
            self._send(TRUNCATION_MARKER if path is None else spill_marker(path))

    def _send(self, text: str) -> None:
        seq = self._seq
        self._seq = seq + 1
        head = self._head if not in_forked_child[0] else self._child_head()
        self._write_line(head + b"%d" % seq + b',"text":' + json_string_bytes(text) + b"}\n")

    def _child_head(self) -> bytes:
        # Same Cell id (the host still shows it live), another stream.
        pid = os.getpid()
        return self._head.replace(
            b',"stream":' + dumps(self._stream_id).encode() + b",",
            b',"stream":"child-%d",' % pid,
            1,
        )
