"""Makes one delivered SIGINT take effect even when it lands in the gap
before a blocking call.

CPython's C-level handler only trips a flag; the Python handler runs when
the main thread next checks it. A signal arriving after the last check but
before a blocking syscall starts (the entry of `time.sleep`, a `read`) is
never acted on: the syscall was not running, so there is no EINTR to wake
it, and the cell sleeps to the end. Measured at about 1 in 300 interrupts
under load. The host sends exactly one signal per `interrupt()`, so the
worker closes the gap itself: the handler's wakeup byte reaches this relay
thread, which re-aims SIGINT at the main thread only while the handler has
still not run and the main thread is asleep in the kernel.

A re-sent signal must never outlive the interrupt it stands for, or it ends
a later cell that nobody interrupted. Two facts keep it in its place:

* The handler count is sampled *before* the relay waits for the byte, and
  every byte already in the pipe at that moment is dropped. So "the count has
  not moved" really means "no handler ran since this signal arrived" -- a
  count read after the byte would miss a handler that ran first and re-send
  for a signal already handled, and every re-sent signal would then re-send
  itself.
* Re-sending is tied to the cell that was armed when the byte was seen
  (``armed_cell()``, None between cells and once a cell's one-shot handler
  fired): a cell that ended, or an idle worker, never gets a re-sent signal.
"""

import _signal
import os
import select
import time

from openai4s.kernel.runtime import threads

#: Re-delivery attempts, after these delays (seconds) without the handler.
_RETRY_DELAYS = (0.01, 0.03, 0.1, 0.3)


def _main_thread_sleeping(tid):
    try:
        fd = os.open(f"/proc/self/task/{tid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            stat = os.read(fd, 512)
        finally:
            os.close(fd)
        state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
    except (OSError, ValueError):
        return False
    # S/D: blocked in a syscall; a running thread (R) reaches its next
    # signal check by itself, so re-sending would only add EINTRs.
    return state in (b"S", b"D")


class InterruptRelay:
    """Started once on the main thread, after the SIGINT handler exists.

    ``handled_count()``: Python-level SIGINT handler runs so far.
    ``armed_cell()``: a token of the cell whose handler is armed, else None.
    """

    def __init__(self, handled_count, armed_cell):
        self._handled_count = handled_count
        self._armed_cell = armed_cell
        self._main_ident = threads.MAIN_IDENT
        self._main_tid = threads.MAIN_NATIVE_ID
        self._read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        # Must run on the main thread; a cell may replace it later (asyncio
        # does), which only returns us to CPython's own behaviour.
        _signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        self._write_fd = write_fd
        threads.start_daemon(self._run)

    def _run(self):
        # Process-directed SIGINTs must land on the main thread (or a cell's
        # thread), never here, where no Python handler can run.
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
        sigint = _signal.SIGINT.to_bytes(1, "little")
        while True:
            # In this order: a byte that arrives after the drain was written
            # after the sample, so its handler (if it runs) moves the count.
            seen = self._handled_count()
            if not self._drain():
                return
            try:
                select.select([self._read_fd], [], [])
                data = os.read(self._read_fd, 256)
            except (InterruptedError, BlockingIOError):
                continue
            except OSError:
                return
            if sigint in data:
                cell = self._armed_cell()
                if cell is not None:
                    self._follow_up(seen, cell)

    def _follow_up(self, seen, cell):
        for delay in _RETRY_DELAYS:
            time.sleep(delay)
            # The /proc read releases the GIL; the checks and the kill that
            # follow it do not, so the main thread cannot finish this cell
            # and arm the next one in between.
            sleeping = _main_thread_sleeping(self._main_tid)
            if self._handled_count() != seen or self._armed_cell() != cell:
                return
            if not sleeping:
                continue
            try:
                _signal.pthread_kill(self._main_ident, _signal.SIGINT)
            except (OSError, ValueError):
                return

    def _drain(self):
        """Drop what is in the pipe; False once the pipe is unusable."""
        while True:
            try:
                if not os.read(self._read_fd, 4096):
                    return False
            except BlockingIOError:
                return True
            except InterruptedError:
                continue
            except OSError:
                return False
