"""`python -m openai4s repl`: a terminal session on one kernel.

A terminal gets prompts, history and Ctrl-C handling; anything else (a pipe,
a file) is read as a script of cells, run without prompts, and the exit
status says whether every cell succeeded.
"""

import signal
import sys

from openai4s import __version__
from openai4s.cli import commands
from openai4s.cli.cells import CellBuffer
from openai4s.cli.history import History
from openai4s.cli.r_cells import RCellBuffer
from openai4s.cli.render import Console, format_error, format_usage
from openai4s.cli.runner import KILL_AFTER_PRESSES, CellFailed, run_cell
from openai4s.cli.variables import format_variables

#: Exit status after the user stopped a script with Ctrl-C (128 + SIGINT).
_STATUS_INTERRUPTED = 130


class KernelLost(Exception):
    """The kernel is gone and could not be replaced; the session ends."""


class Session:
    """One kernel, the input buffer and the bookkeeping between cells."""

    def __init__(self, kernel, console, buffer=None):
        self.kernel = kernel
        self.console = console
        self.buffer = buffer if buffer is not None else CellBuffer()
        self.count = 1
        self.failed = False
        self.stopped_by_user = False

    def prompt(self):
        head = f"In [{self.count}]: "
        if not self.buffer.pending:
            return head
        return "...: ".rjust(len(head))

    def feed(self, line):
        """Take one input line; returns False when the session should end."""
        if not self.buffer.pending:
            try:
                command = commands.classify(line)
            except commands.UnknownMagic as exc:
                self.failed = True
                self.console.message(f"{exc}\n")
                return True
            if command is not None:
                return self._command(command)
        source = self.buffer.push(line)
        if source is not None:
            self.run(source)
        return True

    def finish(self):
        """End of input: a partial cell still runs (a script's last block
        need not end with a blank line)."""
        source = self.buffer.flush()
        if source is not None:
            self.run(source)

    def run(self, source):
        self.count += 1
        streamed = []

        def on_chunk(text):
            streamed.append(text)
            self.console.chunk(text)

        try:
            result = run_cell(self.kernel, source, on_chunk, self._on_ctrl_c)
        except CellFailed as failure:
            self.failed = True
            self.console.message(f"kernel error: {failure.__cause__}\n")
        else:
            self._report(result, streamed)
        self._revive_if_dead()

    def _report(self, result, streamed):
        if not streamed:
            # Nothing streamed (e.g. a response the worker had to shrink):
            # the final stdout is all there is.
            self.console.chunk(result.get("stdout") or "")
        self.console.message(result.get("stderr") or "")
        error = format_error(result)
        if error is not None:
            self.failed = True
            self.console.message(error)
        self.console.message(format_usage(result.get("usage")) or "")

    def _on_ctrl_c(self, presses, delivery):
        # The terminal echoed ^C where the cursor was.
        self.console.cursor_moved()
        if not self.console.interactive:
            self.stopped_by_user = True
        if delivery is None:
            self.console.message("Killing the kernel: it did not respond to interrupts.\n")
        elif not delivery:
            self.console.message(f"Could not interrupt the cell: {delivery.reason}\n")
        elif presses == KILL_AFTER_PRESSES - 1:
            self.console.message("(press Ctrl-C once more to kill the kernel)\n")

    def _revive_if_dead(self):
        if self.kernel.is_alive():
            return
        self.console.message("The kernel died; starting a fresh one (variables are lost).\n")
        self._restart()

    def _restart(self):
        try:
            self.kernel.restart()
        except Exception as exc:
            raise KernelLost(f"openai4s: the kernel could not be restarted: {exc}\n") from exc

    def _command(self, command):
        self.count += 1
        if command == commands.EXIT:
            return False
        if command == commands.HELP:
            self.console.info(commands.HELP_TEXT)
        elif command == commands.RESTART:
            self._restart()
            self.console.message("Kernel restarted; the namespace is empty.\n")
        elif command == commands.VARS:
            self._show_variables()
        return True

    def _show_variables(self):
        try:
            response = self.kernel.inspect_variables()
        except RuntimeError as exc:
            self.failed = True
            self.console.message(f"%vars failed: {exc}\n")
            return
        self.console.info(format_variables(response))


def _interactive(session, history):
    console = session.console
    history.start()
    console.info(f"openai4s {__version__} kernel. %help for help, Ctrl-D to leave.\n")
    while True:
        console.fresh_line()
        try:
            line = input(session.prompt())
        except EOFError:
            console.cursor_moved()
            break
        except KeyboardInterrupt:
            # Ctrl-C at a prompt discards what was typed, as in Python.
            console.cursor_moved()
            session.buffer.reset()
            continue
        try:
            # A bracketed paste can hand us several lines at once.
            if not all(session.feed(part) for part in line.split("\n")):
                break
        except KeyboardInterrupt:
            console.message("KeyboardInterrupt\n")
            session.buffer.reset()
    console.fresh_line()
    history.save()
    return 0


def _script(session, stream):
    try:
        for raw in stream:
            if not session.feed(raw.rstrip("\r\n")):
                break
            if session.stopped_by_user:
                return _STATUS_INTERRUPTED
        else:
            session.finish()
    except KeyboardInterrupt:
        return _STATUS_INTERRUPTED
    if session.stopped_by_user:
        return _STATUS_INTERRUPTED
    return 1 if session.failed else 0


def _shutdown(kernel):
    try:
        # A Ctrl-C now would only leave the worker half stopped.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        pass  # not the main thread: nothing to protect
    kernel.shutdown()


def _start_kernel(cwd, mode, lang):
    if lang == "r":
        from openai4s.kernel.r_kernel import spawn_r_kernel

        return spawn_r_kernel(cwd=cwd)
    from openai4s.kernel import Kernel

    return Kernel(cwd=cwd, mode=mode)


def run_repl(cwd, mode="repl", lang="python"):
    """Run a session on a new kernel; returns the process exit status."""
    interactive = sys.stdin.isatty()
    console = Console(sys.stdout, sys.stderr, interactive)
    try:
        kernel = _start_kernel(cwd, mode, lang)
    except KeyboardInterrupt:
        return _STATUS_INTERRUPTED
    except Exception as exc:
        console.message(f"openai4s: could not start the kernel: {exc}\n")
        return 1
    session = Session(kernel, console, RCellBuffer() if lang == "r" else None)
    try:
        if interactive:
            return _interactive(session, History())
        return _script(session, sys.stdin)
    except KernelLost as exc:
        console.message(str(exc))
        return 1
    finally:
        _shutdown(kernel)
