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
"""

import os
import select
import signal
import threading
import time

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
    """Started once on the main thread, after the SIGINT handler exists."""

    def __init__(self, handled_count):
        self._handled_count = handled_count
        self._main_ident = threading.main_thread().ident
        self._main_tid = threading.main_thread().native_id
        self._read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        # Must run on the main thread; a cell may replace it later (asyncio
        # does), which only returns us to CPython's own behaviour.
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        self._write_fd = write_fd
        thread = threading.Thread(target=self._run, name="openai4s-interrupt-relay", daemon=True)
        thread.start()

    def _run(self):
        # Process-directed SIGINTs must land on the main thread (or a cell's
        # thread), never here, where no Python handler can run.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        sigint = signal.SIGINT.to_bytes(1, "little")
        while True:
            try:
                select.select([self._read_fd], [], [])
                data = os.read(self._read_fd, 256)
            except InterruptedError:
                continue
            except OSError:
                return
            if sigint in data:
                self._follow_up(self._handled_count())

    def _follow_up(self, seen):
        for delay in _RETRY_DELAYS:
            time.sleep(delay)
            if self._handled_count() != seen:
                return
            if not _main_thread_sleeping(self._main_tid):
                continue
            try:
                signal.pthread_kill(self._main_ident, signal.SIGINT)
            except (OSError, ValueError):
                return
            self._drain_own_wakeup()

    def _drain_own_wakeup(self):
        try:
            os.read(self._read_fd, 256)
        except OSError:
            pass
