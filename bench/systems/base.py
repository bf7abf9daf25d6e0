"""What every kernel system adapter offers the metrics.

The metrics time around these calls, so an adapter does the natural thing
a client of that system would do and nothing more.
"""

from dataclasses import dataclass
from typing import Callable, Optional


@dataclass
class CellResult:
    stdout: str  # the cell's stdout, plus an expression's value where the system echoes it
    error: Optional[str]  # "Name: message" or None
    interrupted: bool
    streamed_chars: int  # stdout characters handed to on_stream while the cell ran
    aborted: bool = False  # the kernel refused to run the cell (ipykernel's stop_on_error)
    stdout_file: Optional[str] = None  # cwd-relative file the overflowing stdout went to


class KernelSession:
    """One live kernel. Subclasses implement every method."""

    name = "?"

    def execute(
        self,
        code: str,
        on_stream: Optional[Callable[[str], None]] = None,
        stdin_reply: Optional[str] = None,
        timeout: float = 120.0,
    ) -> CellResult:
        """Run one cell to its result. stdin_reply answers every input()."""
        raise NotImplementedError

    def spilled_bytes(self, result: CellResult) -> int:
        """Size of the file ``result``'s overflowing stdout went to; 0 if
        none. Called outside the timed region: it may wait for the kernel
        to finish writing the file."""
        return 0

    def prepare_interrupt_thread(self) -> None:
        """Called once on the thread that will call interrupt(), before the
        clock starts, so per-thread set-up is not charged to the latency."""

    def release_interrupt_thread(self) -> None:
        """Undoes prepare_interrupt_thread, on the same thread."""

    def interrupt(self) -> None:
        raise NotImplementedError

    def worker_pids(self) -> list:
        """Root pids of the kernel's process tree(s)."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop the kernel; must not raise and must leave no process behind."""
        raise NotImplementedError
