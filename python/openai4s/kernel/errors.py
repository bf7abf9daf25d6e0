"""Exceptions of the kernel API (a leaf module: no imports of the core).

Every class is a RuntimeError (what callers have always caught) under one
base, KernelError, and its message ends with what to do about it.
"""


class KernelError(RuntimeError):
    """A kernel operation failed; ``what_to_do`` is appended to the message."""

    what_to_do = ""

    def __init__(self, message="", *args):
        text = str(message)
        if self.what_to_do and self.what_to_do not in text:
            text = f"{text}; {self.what_to_do}" if text else self.what_to_do
        super().__init__(text, *args)


class KernelBusyError(KernelError):
    """A transaction is in flight; inspection refuses instead of waiting."""

    what_to_do = "a cell is running: wait for it, or call interrupt() to stop it"


class KernelNotAliveError(KernelError):
    """The worker process is gone (it exited, was killed or shut down)."""

    what_to_do = "call restart() to start a fresh worker (its namespace starts empty)"


class KernelDiedError(KernelNotAliveError):
    """The worker exited while a request was in flight."""


class KernelProtocolError(KernelError):
    """The worker broke the frame protocol; the kernel may be out of step."""

    what_to_do = "if the next request fails too, call restart()"


class KernelUnresponsiveError(KernelProtocolError):
    """The worker left an idle request (completion, help, variables, ...)
    unanswered past its bound; it was stopped like one that broke the
    protocol."""

    what_to_do = "call restart() to start a fresh worker (its namespace starts empty)"


class KernelStartError(KernelError):
    """A worker could not be started or did not complete its handshake."""

    what_to_do = "see the kernel's worker_log_tail and stderr tail for the cause"


class KernelRestartFailed(KernelError):
    """A restart could not produce a live worker."""

    what_to_do = "check the interpreter and working directory, then call restart() again"


class KernelInterruptUnavailable(KernelError):
    """There is no way to deliver an interrupt to this worker."""


class KernelTimeoutError(KernelError, TimeoutError):
    """A deadline passed (a cell's ``timeout``, a handshake)."""


__all__ = [
    "KernelError",
    "KernelBusyError",
    "KernelNotAliveError",
    "KernelDiedError",
    "KernelProtocolError",
    "KernelUnresponsiveError",
    "KernelStartError",
    "KernelRestartFailed",
    "KernelInterruptUnavailable",
    "KernelTimeoutError",
]
