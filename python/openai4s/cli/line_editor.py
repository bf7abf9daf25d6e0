"""The interactive REPL's line editor, on prompt_toolkit (Debian's
python3-prompt-toolkit).

One buffer holds the whole cell, so a paste (bracketed by the terminal) is
inserted as text and never submits itself: a blank line inside a pasted
function stays inside it. Enter runs the buffer when `ready_to_run` says the
cell is complete, and otherwise opens a new, auto-indented line. Tab indents
at the start of a line and completes through the kernel elsewhere. History
is kept in `~/.openai4s/repl_history`.
"""

import os

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings

from openai4s.cli.cells import next_indent, ready_to_run

HISTORY_PATH = os.path.join("~", ".openai4s", "repl_history")

#: Completions offered at most (a huge namespace must not flood the menu).
_MAX_COMPLETIONS = 200


class KernelCompleter(Completer):
    """Completions from the kernel's `complete` request (which never runs
    user code). Asked only at the prompt, when no cell is running."""

    def __init__(self, kernel_of):
        self._kernel_of = kernel_of
        #: Why the kernel was lost during a completion (a worker that left
        #: it unanswered is stopped), for the REPL to say after the prompt.
        self.lost = None

    def get_completions(self, document, complete_event):
        kernel = self._kernel_of()
        complete = getattr(kernel, "complete", None)
        if complete is None:
            return
        try:
            reply = complete(document.text, document.cursor_position)
        except Exception as exc:
            # A busy or dead kernel offers nothing; the prompt goes on.
            # The first reason is the one to tell (a later try meets only
            # the dead worker it left).
            if not _alive(kernel) and self.lost is None:
                self.lost = str(exc)
            return
        matches = reply.get("matches") or []
        start = reply.get("cursor_start", document.cursor_position)
        offset = start - document.cursor_position
        if offset > 0:
            return
        for match in matches[:_MAX_COMPLETIONS]:
            if isinstance(match, str):
                yield Completion(match, start_position=offset)


def _alive(kernel):
    try:
        return bool(kernel.is_alive())
    except Exception:
        return False


def _key_bindings(ready):
    bindings = KeyBindings()

    @bindings.add("enter")
    def _enter(event):
        buffer = event.current_buffer
        if buffer.complete_state is not None and buffer.complete_state.current_completion:
            buffer.apply_completion(buffer.complete_state.current_completion)
            return
        at_end = not buffer.document.text_after_cursor.strip()
        if at_end and ready(buffer.text):
            buffer.validate_and_handle()
            return
        buffer.insert_text("\n" + next_indent(buffer.document.current_line_before_cursor))

    @bindings.add("tab")
    def _tab(event):
        buffer = event.current_buffer
        if not buffer.document.current_line_before_cursor.strip():
            buffer.insert_text("    ")
        else:
            buffer.start_completion(select_first=False, insert_common_part=True)

    return bindings


class LineEditor:
    """Reads one cell per `read(prompt)`; raises EOFError on Ctrl-D at an
    empty prompt and KeyboardInterrupt on Ctrl-C (the cell is discarded).
    `ready(text)` decides whether Enter runs the buffer (Python's rules by
    default; the R session passes its own)."""

    def __init__(self, kernel_of, history_path=HISTORY_PATH, ready=None):
        self._completer = KernelCompleter(kernel_of)
        self._session = PromptSession(
            history=_history(os.path.expanduser(history_path)),
            completer=self._completer,
            complete_while_typing=False,
            # Asked from a thread: a worker slow to answer (up to the idle
            # bound) never freezes typing or Ctrl-C at the prompt.
            complete_in_thread=True,
            key_bindings=_key_bindings(ready or ready_to_run),
            multiline=True,
            enable_history_search=False,
        )

    def read(self, prompt):
        width = len(prompt)
        return self._session.prompt(
            prompt,
            prompt_continuation=lambda *_: "...: ".rjust(width),
        )

    def take_kernel_loss(self):
        """Why a completion lost the kernel since the last call, or None."""
        lost, self._completer.lost = self._completer.lost, None
        return lost


def _history(path):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError:
        return InMemoryHistory()  # an unwritable home: no history, still a REPL
    return FileHistory(path)
