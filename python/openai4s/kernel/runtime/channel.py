"""The worker's protocol descriptors (published on ``sys``) and their reader.

Set up before anything can print: the protocol moves off fds 0 and 1, fd 1
becomes an alias of stderr (so a stray ``print`` or a native write can never
reach the wire) and fd 0 reads ``/dev/null`` (so ``input()`` or a child that
inherits stdin cannot consume frames). State lives on ``sys`` so that a
re-published stream is seen by every accessor.
"""

import io
import os
import select
import sys
import time

from openai4s.kernel.runtime import threads

CORRUPTED = "protocol IN corrupted and no reserve fd to recover"


#: How long a read polls for the host's next frame before it sleeps. Every
#: read here follows a frame the worker sent (a response, a host call), and
#: the answer usually comes within microseconds; a reader asleep in read()
#: costs a vCPU wake-up (tens of microseconds on a VM) to get it.
SPIN_SECONDS = 100e-6


class LineIn:
    """Protocol IN: newline-terminated UTF-8 frames as text.

    Its own buffer (rather than a TextIOWrapper) so it knows when no whole
    line is held and only then polls briefly before blocking. Undecodable
    bytes become U+FFFD in an UndecodableLine: a stray byte must make a bad
    frame the loop answers (``frames.decode`` refuses it, as the host
    refuses invalid UTF-8), not an exception that ends the worker. Finalisation never
    closes the descriptor (a parked wrapper's number may be someone else's).
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._searched = 0
        self.closed = False

    def fileno(self) -> int:
        self._check_open()
        return self._fd

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self._fd)

    def readline(self) -> str:
        """The next line with its newline; a last unterminated line; "" at
        end of stream."""
        self._check_open()
        buffer = self._buffer
        while True:
            end = buffer.find(b"\n", self._searched)
            if end >= 0:
                line = bytes(buffer[: end + 1])
                del buffer[: end + 1]
                self._searched = 0
                return _text(line)
            self._searched = len(buffer)
            if not buffer:
                self._spin()
            # A frame of megabytes arrives in few reads, not thousands.
            data = os.read(self._fd, max(65536, len(buffer)))
            if not data:
                rest = bytes(buffer)
                buffer.clear()
                self._searched = 0
                return _text(rest)
            buffer += data

    def holds_a_line(self) -> bool:
        """A whole line is buffered or bytes wait on the pipe (never blocks)."""
        if not self.closed and self._buffer.find(b"\n", self._searched) >= 0:
            return True
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        try:
            return bool(poller.poll(0))
        except OSError:
            return True  # cannot tell: behave as if a request were there

    def _spin(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        deadline = time.perf_counter() + SPIN_SECONDS
        # poll() releases the GIL, so a Cell's threads still run meanwhile.
        while not poller.poll(0) and time.perf_counter() < deadline:
            os.sched_yield()

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed protocol stream")


class UndecodableLine(str):
    """A line whose bytes were not UTF-8, shown with U+FFFD where they were
    (its type, not its text, says that it was invalid)."""


def _text(line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return UndecodableLine(line.decode("utf-8", "replace"))


def _wrap_in(fd: int):
    return LineIn(fd)


def _wrap_out(fd: int):
    return io.open(fd, "w", encoding="utf-8", errors="replace", newline="\n", buffering=1)


def _identity(stream):
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return (status.st_dev, status.st_ino)


def _fd_identity(fd: int):
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return (status.st_dev, status.st_ino)


def publish(in_stream, out_stream, reserve_fd: int) -> None:
    """Publish IN/OUT, the reserve, the IN identity and the two locks on sys."""
    sys._openai4s_protocol_stdin = in_stream
    sys._openai4s_protocol_stdout = out_stream
    sys._openai4s_proto_in_reserve = reserve_fd
    sys._openai4s_protocol_ident = _identity(in_stream)
    sys._openai4s_parked_wrappers = []
    # Held only while one frame is written, so frames never interleave.
    sys._openai4s_protocol_lock = threads.Lock()
    # Held for a whole host RPC, so no second request precedes an answer.
    sys._openai4s_host_call_lock = threads.Lock()


def setup_local() -> None:
    """Move the protocol off fds 0/1 of a locally spawned worker (os.dup is
    non-inheritable, so a Cell's children never see the protocol)."""
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    reserve_fd = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    if devnull != 0:
        os.dup2(devnull, 0)
        os.close(devnull)
    publish(_wrap_in(in_fd), _wrap_out(out_fd), reserve_fd)


def _recover(old):
    """One-shot rebuild of IN from the reserve descriptor (spends it)."""
    recorded = sys._openai4s_protocol_ident
    reserve = getattr(sys, "_openai4s_proto_in_reserve", -1)
    if not isinstance(reserve, int) or reserve < 0:
        raise RuntimeError(CORRUPTED)
    sys._openai4s_proto_in_reserve = -1
    # The reserve number may itself have been closed and recycled.
    if recorded is None or _fd_identity(reserve) != recorded:
        raise RuntimeError(CORRUPTED)
    fd = os.dup(reserve)
    os.close(reserve)
    if _identity(old) == recorded:
        try:
            old.close()
        except Exception:
            sys._openai4s_parked_wrappers.append(old)
    else:
        # Its descriptor number now belongs to someone else: closing the
        # wrapper (here or at finalisation) would close their file.
        sys._openai4s_parked_wrappers.append(old)
    stream = _wrap_in(fd)
    sys._openai4s_protocol_stdin = stream
    sys._openai4s_protocol_ident = _identity(stream)
    return stream


#: Requests that a thread waiting for its own RPC answer read off the pipe
#: (between Cells); the main loop takes them before reading again.
_deferred_requests = []


def defer_request(line: str) -> None:
    _deferred_requests.append(line)


def next_request_line() -> str:
    """The main loop's next line: a deferred request first, else the pipe."""
    if _deferred_requests:
        return _deferred_requests.pop(0)
    return read_line()


def request_waiting() -> bool:
    """Whether the main loop's next read would find a request at once."""
    if _deferred_requests:
        return True
    holds = getattr(sys._openai4s_protocol_stdin, "holds_a_line", None)
    return True if holds is None else holds()


def waiting_lines() -> list:
    """Every line the host has already written, read without waiting for
    more (a line half written is read to its end: the host writes a frame
    whole, so the rest is on its way)."""
    lines = []
    holds = getattr(sys._openai4s_protocol_stdin, "holds_a_line", None)
    while holds is not None and holds():
        line = read_line()
        if line == "":
            break
        lines.append(line)
    return lines


def read_line() -> str:
    """One protocol line ("" at end of stream), checking IN's identity
    before and after the read."""
    stream = sys._openai4s_protocol_stdin
    if _identity(stream) != sys._openai4s_protocol_ident:
        stream = _recover(stream)
    try:
        line = stream.readline()
    except (OSError, ValueError):
        line = None
    if line is None or _identity(stream) != sys._openai4s_protocol_ident:
        stream = _recover(stream)
        line = stream.readline()
    return line
