"""Native output of a Cell: what child processes, C libraries and
``os.write`` put on fds 1 and 2 joins the Cell's stdout and stderr.

While a Cell runs, fds 1 and 2 are the write ends of two pipes this module
reads. A pump thread forwards what arrives as it arrives (so a long child
streams live). Once native output is to be expected in a Cell (an audit
event: a child process started, a ctypes call; or the pump saw bytes),
every Python-level write to the Cell's stdout/stderr first drains what is
already waiting (``drain``), so a child that finished before a ``print`` is
shown before it. Before that, a write costs nothing extra: a poll per write
would be a syscall in the hot path of a Cell that prints in a loop. Between Cells fds 1 and 2 point at
the worker's own stderr again (the host's diagnostic tail), so a crash
outside a Cell, and anything a lingering child writes later, still lands
there. ``diagnostics_fd`` is that stderr at all times: faulthandler writes
there, so a segfault or an abort inside a Cell still reaches the host.

The protocol pipe is never one of these descriptors (channel.py moved it
off fds 0/1 before this module runs), so nothing here can touch the wire.
"""

import _signal
import codecs
import os
import select
import sys

from openai4s.kernel.runtime import threads
from openai4s.kernel.runtime.forks import in_forked_child

_READ_BYTES = 65536


def _utf8_decoder():
    return codecs.getincrementaldecoder("utf-8")("replace")


class NativeOutput:
    """Created once, on the main thread, after the protocol left fds 0/1."""

    def __init__(self) -> None:
        #: The worker's own stderr (non-inheritable): the host's tail.
        self.diagnostics_fd = os.dup(2)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        for fd in (out_read, err_read):
            os.set_blocking(fd, False)
        self._reads = (out_read, err_read)
        self._writes = (out_write, err_write)
        self._targets = None
        self._decoders = (_utf8_decoder(), _utf8_decoder())
        #: The decoders hold nothing of this Cell yet (set up lazily).
        self._fresh_decoders = True
        #: Native output is to be expected in this Cell (see drain).
        self._expecting = False
        # Held while bytes move from a pipe to a target: the pump and a
        # drain never deliver the same Cell's output out of order.
        self._lock = threads.Lock()
        #: The pump is delivering; a writer then waits for it (drain).
        self._pumping = False
        self._poll = select.poll()
        for fd in self._reads:
            self._poll.register(fd, select.POLLIN)
        self._fflush = None
        threads.start_daemon(self._pump)

    def begin(self, stdout, stderr) -> None:
        """Route fds 1/2 into this Cell's ``stdout``/``stderr`` objects."""
        self._expecting = False
        self._fresh_decoders = True
        self._targets = (stdout, stderr)
        os.dup2(self._writes[0], 1)
        os.dup2(self._writes[1], 2)

    def expect(self) -> None:
        """Native output may follow (audit hook): writers drain from now on."""
        self._expecting = True

    def end(self) -> None:
        """Take what the Cell left in the pipes and route fds 1/2 back."""
        if "ctypes" in sys.modules:
            self._flush_libc()
        os.dup2(self.diagnostics_fd, 1)
        os.dup2(self.diagnostics_fd, 2)
        with self._lock:
            if self._pumping or self._poll.poll(0):
                self._drain_locked()
            if not self._fresh_decoders:
                for decoder, target in zip(self._decoders, self._targets):
                    rest = decoder.decode(b"", final=True)
                    if rest:
                        target.write_native(rest)
            # Under the lock: the pump delivers nothing more to this Cell.
            self._targets = None

    def drain(self) -> None:
        """Deliver what is already waiting, before a Python-level write."""
        if not self._expecting or in_forked_child[0]:
            # Nothing expected; or a forked child, which must not steal the
            # parent's bytes.
            return
        if self._pumping or self._poll.poll(0):
            with self._lock:
                self._drain_locked()

    def _drain_locked(self) -> None:
        for index, fd in enumerate(self._reads):
            while True:
                try:
                    data = os.read(fd, _READ_BYTES)
                except BlockingIOError:
                    break
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not data:
                    break
                self._deliver(index, data)

    def _deliver(self, index, data) -> None:
        targets = self._targets
        if targets is None:
            _write_all(self.diagnostics_fd, data)
            return
        if self._fresh_decoders:
            self._decoders = (_utf8_decoder(), _utf8_decoder())
            self._fresh_decoders = False
        # Later writes in this Cell keep their order with this output.
        self._expecting = True
        text = self._decoders[index].decode(data)
        if text:
            targets[index].write_native(text)

    def _pump(self) -> None:
        # A process-directed SIGINT must go to the main thread, not here.
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
        poll = select.poll()
        for fd in self._reads:
            poll.register(fd, select.POLLIN)
        while True:
            try:
                events = poll.poll()
            except InterruptedError:
                continue
            for fd, event in events:
                if event & select.POLLNVAL:
                    # A Cell closed our descriptor: stop watching it rather
                    # than spin on it.
                    poll.unregister(fd)
                    self._poll.unregister(fd)
            self._pumping = True
            try:
                with self._lock:
                    self._drain_locked()
            except Exception:
                pass  # a target that refuses text must not end the pump
            finally:
                self._pumping = False

    def _flush_libc(self) -> None:
        # C stdio buffers a pipe's output until exit; a Cell that used
        # ctypes expects its printf to show up with the Cell.
        if self._fflush is None:
            ctypes = sys.modules.get("ctypes")
            if ctypes is None:
                return
            try:
                self._fflush = ctypes.CDLL(None).fflush
            except Exception:
                self._fflush = False
        if self._fflush:
            try:
                self._fflush(None)
            except Exception:
                pass


def _write_all(fd, data) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        pass
