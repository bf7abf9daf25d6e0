"""``Kernel.execute(timeout=...)``: interrupt a cell that overruns, then
kill its worker if the interrupt does not end it (the kill ladder).

The watchdog never fires after the execute it guards has returned: a late
interrupt would hit whatever the kernel runs next (an idle worker swallows
it, but the caller's next cell may already be on its way).
"""

import threading

#: After the interrupt, how long the cell has to wind down before the kill.
KILL_GRACE_S = 5.0


def check_timeout(timeout):
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not timeout > 0 or timeout != timeout or timeout == float("inf"):
        raise ValueError(f"timeout must be a positive, finite number of seconds, not {timeout!r}")


class CellWatchdog:
    """A context manager around one execute on ``kernel``."""

    def __init__(self, kernel, timeout):
        self._kernel = kernel
        self.timeout = float(timeout)
        self.grace = KILL_GRACE_S
        self._lock = threading.Lock()
        self._done = False
        self.fired = False
        self.killed = False
        self._timer = None

    def __enter__(self):
        self._timer = threading.Timer(self.timeout, self._interrupt)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc_info):
        # Under the lock: a firing in progress finishes before we return,
        # and none starts after.
        with self._lock:
            self._done = True
            timer = self._timer
        timer.cancel()
        return False

    def _interrupt(self):
        with self._lock:
            if self._done:
                return
            self.fired = True
            self._timer = threading.Timer(self.grace, self._kill)
            self._timer.daemon = True
            self._timer.start()
            try:
                self._kernel.interrupt()
            except Exception:
                pass  # no interrupt path: the kill follows after the grace

    def _kill(self):
        with self._lock:
            if self._done:
                return
            self.killed = True
            self._kernel.kill_worker()

    def annotate(self, response):
        """Mark a cell the interrupt ended (``timed_out``)."""
        if self.fired and isinstance(response, dict) and response.get("interrupted"):
            response["timed_out"] = True
            response[
                "error"
            ] = f"Timed out: the cell ran past its {self.timeout:g} s timeout and was interrupted"

    def kill_message(self):
        return (
            f"the cell ran past its {self.timeout:g} s timeout, did not stop within "
            f"{self.grace:g} s of its interrupt, and its worker was killed; "
            "call restart() to start a fresh worker"
        )
