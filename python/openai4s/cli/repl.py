"""`python -m openai4s repl`: a terminal session on one kernel.

A terminal gets a multi-line editor (prompt_toolkit), history, completion
and Ctrl-C handling; anything else (a pipe, a file) is read as a script of
cells, run without prompts, and the exit status says whether every cell
succeeded. Cells reach the host through a real dispatcher (`host.*`); a call
whose permission is "ask" is put to the person at the terminal.
"""

import os
import signal
import sys
import time

from openai4s import __version__
from openai4s.cli import commands, magics, sandbox_notes
from openai4s.cli.cells import CellBuffer
from openai4s.cli.displays import DisplayWriter
from openai4s.cli.prompt_broker import PromptBroker
from openai4s.cli.r_cells import RCellBuffer
from openai4s.cli.render import Console, format_error, format_usage, repl_words
from openai4s.cli.runner import KILL_AFTER_PRESSES, CellFailed, run_cell
from openai4s.cli.terminal_group import terminal_foreground
from openai4s.cli.variables import format_variables

#: Exit status after the user stopped a script with Ctrl-C (128 + SIGINT).
_STATUS_INTERRUPTED = 130


class KernelLost(Exception):
    """The kernel is gone and could not be replaced; the session ends."""


class Session:
    """One kernel, the input buffer and the bookkeeping between cells.

    `count` is the number the kernel will give the next cell (its traceback
    says `<kernel:N>`): it grows only when a cell is sent, and starts again at
    1 with a fresh worker.
    """

    def __init__(self, kernel, console, broker=None, buffer=None, lang="python"):
        self.kernel = kernel
        self.lang = lang
        self.console = console
        self.broker = broker or PromptBroker(console, console.interactive)
        self.cwd = getattr(kernel, "cwd", None) or os.getcwd()
        self.displays = DisplayWriter(self.cwd, console)
        self.buffer = buffer if buffer is not None else CellBuffer()
        self.count = 1
        self.failed = False
        self.stopped_by_user = False
        #: `openai4s run`: a script stops at its first failing cell, as
        #: `python script.py` does (a piped REPL carries on, as a REPL does).
        self.stop_on_error = False

    def prompt(self):
        head = f"In [{self.count}]: "
        if not self.buffer.pending:
            return head
        return "...: ".rjust(len(head))

    def feed(self, line):
        """Take one input line; returns False when the session should end."""
        if not self.buffer.pending:
            handled = self._local(line)
            if handled is not None:
                return handled
        source = self.buffer.push(line)
        while source is not None:
            self.run(source)
            if self.stop_on_error and self.failed:
                return False
            # One line can end a block and be a cell itself.
            take_ready = getattr(self.buffer, "take_ready", None)
            source = take_ready() if take_ready is not None else None
        return True

    def feed_cell(self, text):
        """Take one whole cell from the editor; returns False to end."""
        if not text.strip():
            return True
        handled = self._local(text)
        if handled is not None:
            return handled
        self.run(text)
        return True

    def _local(self, text):
        """Answer a REPL command (`%vars`, `exit`, ...) here: its result for
        feed, or None when `text` is code (shortcuts such as `%time` are
        code: they become cells)."""
        try:
            command = commands.classify(text)
        except commands.UnknownMagic as exc:
            if magics.translate(text) is not None:
                return None
            self.failed = True
            self.console.message(f"{exc}\n")
            return True
        return None if command is None else self._command(command)

    def finish(self):
        """End of input: a partial cell still runs (a script's last block
        need not end with a blank line)."""
        source = self.buffer.flush()
        if source is not None:
            self.run(source)

    def run(self, source):
        # The shortcuts become Python cells, so an R session has none but
        # `name?`, which asks the worker (R's help) and runs no cell.
        shortcut = magics.translate(source)
        if self.lang != "python" and shortcut is not None and shortcut.kind != "inspect":
            shortcut = None
        if shortcut is not None and shortcut.kind == "inspect":
            self._inspect(shortcut)
            return
        code = source if shortcut is None else shortcut.code
        started = time.monotonic()
        result = self._execute(code)
        if result is not None and shortcut is not None and shortcut.kind == "time":
            wall = time.monotonic() - started
            self.console.message(magics.format_time(result.get("usage"), wall))

    def _execute(self, code):
        number = self.count
        self.count += 1
        streamed = []

        def on_chunk(text):
            streamed.append(text)
            self.console.chunk(text)

        result = None
        try:
            result = run_cell(
                self.kernel, code, on_chunk, self._on_ctrl_c, self.broker, **self._options(number)
            )
        except CellFailed as failure:
            self.failed = True
            text = str(failure.__cause__)
            if not self.kernel.is_alive():
                # The REPL starts a fresh kernel itself (below): no advice.
                text = text.split("; call restart()")[0]
            self.console.message(repl_words(f"kernel error: {text}\n"))
        else:
            self._report(result, streamed)
        self._revive_if_dead()
        return result

    def _options(self, number):
        # input() in a cell is answered at this terminal, and displays are
        # saved or printed, when the kernel offers those channels; the cell
        # is named by its prompt number (`<kernel:N>` is `In [N]`).
        options = {}
        if _accepts(self.kernel.execute, "cell_name"):
            options["cell_name"] = str(number)
        if _accepts(self.kernel.execute, "on_input"):
            options["on_input"] = self.broker.read_input
        if _accepts(self.kernel.execute, "on_display"):
            options["on_display"] = self.displays
        return options

    def _inspect(self, shortcut):
        inspect = getattr(self.kernel, "inspect", None)
        if inspect is None:
            self.console.message("obj? needs a kernel with inspect()\n")
            return
        try:
            reply = inspect(shortcut.code, len(shortcut.code), detail_level=shortcut.detail_level)
        except Exception as exc:
            self.console.message(repl_words(f"{shortcut.code}?: {exc}\n"))
            return
        text = (reply.get("data") or {}).get("text/plain") if reply.get("found") else None
        self.console.info((text or f"Object `{shortcut.code}` not found.") + "\n")

    def _report(self, result, streamed):
        if not streamed:
            # Nothing streamed (e.g. a response the worker had to shrink):
            # the final stdout is all there is.
            self.console.chunk(result.get("stdout") or "")
        error = format_error(result)
        stderr, hint = result.get("stderr") or "", None
        if error is not None:
            stderr, hint = sandbox_notes.split_hint(result, self.kernel, self.cwd)
        self.console.message(stderr)
        if error is not None:
            self.failed = True
            self.console.message(error)
            self.console.message(hint)
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
            raise KernelLost(
                repl_words(f"openai4s: the kernel could not be restarted: {exc}\n")
            ) from exc
        self.count = 1

    def _command(self, command):
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
            self.console.message(repl_words(f"%vars failed: {exc}\n"))
            return
        self.console.info(format_variables(response))


def _accepts(function, name):
    import inspect

    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters


def _interactive(session):
    from openai4s.cli.line_editor import LineEditor

    console = session.console
    ready = None
    if session.lang == "r":
        from openai4s.cli import r_cells

        ready = lambda text: not r_cells.is_open(text)  # noqa: E731
    editor = LineEditor(lambda: session.kernel, ready=ready)
    language = "R" if session.lang == "r" else "Python"
    console.info(f"openai4s {__version__} {language} kernel. %help for help, Ctrl-D to leave.\n")
    console.info(sandbox_notes.banner(session.kernel, session.cwd))
    while True:
        console.fresh_line()
        try:
            text = editor.read(session.prompt())
        except EOFError:
            break
        except KeyboardInterrupt:
            text = None  # Ctrl-C at a prompt discards what was typed
        finally:
            _after_completion(session, editor)
        if text is None:
            continue
        try:
            if not session.feed_cell(text):
                break
        except KeyboardInterrupt:
            console.message("KeyboardInterrupt\n")
    console.fresh_line()
    return 0


def _after_completion(session, editor):
    lost = editor.take_kernel_loss()
    if lost is not None:
        # The REPL starts the fresh worker itself (next line): the API's
        # advice to call restart() is not for its user.
        lost = lost.split("; call restart()", 1)[0]
        session.console.message(repl_words(f"Completion failed: {lost}\n"))
        session._revive_if_dead()


def _script(session, stream):
    if session.lang == "python":
        # A script's `if __name__ == "__main__":` block runs, as under
        # `python script.py` (the kernel's namespace is `__openai4s__`).
        session.run('__name__ = "__main__"')
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


def _tty():
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _shutdown(kernel):
    try:
        # A Ctrl-C now would only leave the worker half stopped.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        pass  # not the main thread: nothing to protect
    kernel.shutdown()


def _dispatcher(cwd, broker, console):
    """The session's host dispatcher (store in the data directory, one frame
    per session), or None with a message when it cannot be had: the REPL
    still runs cells, only `host.*` is unavailable."""
    try:
        from openai4s.host_dispatch import build_dispatcher

        dispatcher = build_dispatcher(workspace=cwd)
        dispatcher.frame_id = dispatcher.store.new_frame(kind="turn", name=f"repl {cwd}")
    except Exception as exc:
        console.message(f"openai4s: host.* is unavailable in this session: {exc}\n")
        return None
    if broker.interactive:
        # A person is there to ask; a script run is decided by the
        # unattended policy (OPENAI4S_UNATTENDED_APPROVAL) instead.
        dispatcher.approver = broker.approve
    return dispatcher


def _start_kernel(cwd, mode, lang, broker, console, standby):
    # The standby is a second worker started in the background, so that
    # %restart swaps it in instead of waiting for a spawn (issue 28).
    dispatcher = _dispatcher(cwd, broker, console)
    if lang == "r":
        from openai4s.kernel.r_kernel import spawn_r_kernel

        # R cells reach the host through `host$...` (runtime/r_host.R).
        return spawn_r_kernel(cwd=cwd, dispatcher=dispatcher, standby=standby)
    from openai4s.kernel import Kernel

    return Kernel(dispatcher=dispatcher, cwd=cwd, mode=mode, standby=standby)


def run_repl(cwd, mode="repl", lang="python", script=None, standby=False):
    """Run a session on a new kernel; returns the process exit status.

    With `script` (a path), run that file's cells and stop at the first
    failure (`openai4s run`); else read the terminal, or stdin as a script.
    `standby` keeps a second worker ready for %restart (`openai4s repl`
    does, unless --no-standby).
    """
    if script is not None:
        try:
            stream = open(script, encoding="utf-8")
        except OSError as exc:
            print(f"openai4s run: {exc.strerror}: {script}", file=sys.stderr)
            return 2
        with stream:
            return _run(cwd, mode, lang, stream, standby)
    return _run(cwd, mode, lang, None, standby)


def _run(cwd, mode, lang, script_stream, standby):
    interactive = script_stream is None and sys.stdin.isatty()
    console = Console(sys.stdout, sys.stderr, interactive)
    # A person at the terminal still answers approvals for `openai4s run`.
    broker = PromptBroker(console, interactive or (script_stream is not None and _tty()))
    try:
        kernel = _start_kernel(cwd, mode, lang, broker, console, standby)
    except KeyboardInterrupt:
        return _STATUS_INTERRUPTED
    except Exception as exc:
        console.message(f"openai4s: could not start the kernel: {exc}\n")
        return 1
    r_session = lang == "r"
    session = Session(kernel, console, broker, RCellBuffer() if r_session else None, lang)
    session.stop_on_error = script_stream is not None
    try:
        if interactive:
            with terminal_foreground(sys.stdin):
                return _interactive(session)
        return _script(session, script_stream or sys.stdin)
    except KernelLost as exc:
        console.message(str(exc))
        return 1
    finally:
        _shutdown(kernel)
