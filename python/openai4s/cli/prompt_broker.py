"""Questions a running cell needs a person to answer, asked on the main
thread.

A cell runs on its own thread (see runner.py) while the main thread waits
and turns Ctrl-C into interrupts. When the cell needs the terminal (a host
call whose permission is "ask", or `input()` in the cell), its thread posts
a Question here and blocks; the main thread, between its wait slices, asks
it at the terminal and posts the answer back. So only one thread ever reads
the terminal, and Ctrl-C at such a prompt answers the question ("no", or an
interrupted `input()`) instead of racing the interrupt machinery.
"""

import getpass
import queue
import threading
from dataclasses import dataclass, field

APPROVAL = "approval"
INPUT = "input"

# Written before an approval prompt. The cell's own output reaches the
# terminal verbatim, and terminal state outlives it: concealed or
# same-colour text, a line-drawing character set, a scroll region. A soft
# reset (DECSTR) and an attribute reset put the prompt back on a plain
# screen; they clear nothing that was shown.
TERMINAL_RESET = "\x1b[!p\x1b[0m"


@dataclass
class Question:
    kind: str  # APPROVAL or INPUT
    text: str
    password: bool = False
    answered: threading.Event = field(default_factory=threading.Event)
    answer: object = None
    error: BaseException = None


class PromptBroker:
    def __init__(self, console, interactive):
        self.console = console
        self.interactive = interactive
        self._pending = queue.SimpleQueue()

    # -- the cell's thread ---------------------------------------------------

    def approve(self, request):
        """A dispatcher approver: "once", "conversation" or "deny".

        The prompt is the host's rendering (openai4s._core, shared by every
        front door): the target's control and bidi characters escaped, a
        long target visibly cut, "always" offered only when it may be."""
        answer = self._ask(Question(APPROVAL, request["prompt"]))
        if answer == "conversation" and "conversation" not in request.get("choices", ()):
            return "deny"
        return answer

    def read_input(self, prompt, password=False):
        """An execute(on_input=...) callback: the line typed, without its
        newline. Raises EOFError/KeyboardInterrupt as input() would."""
        if not self.interactive:
            raise EOFError("input(): the REPL is reading a script, not a terminal")
        return self._ask(Question(INPUT, prompt, password))

    def _ask(self, question):
        self._pending.put(question)
        question.answered.wait()
        if question.error is not None:
            raise question.error
        return question.answer

    # -- the main thread -----------------------------------------------------

    def serve(self):
        """Ask every pending question; called by the main thread."""
        while True:
            try:
                question = self._pending.get_nowait()
            except queue.Empty:
                return
            try:
                question.answer = self._ask_terminal(question)
            except (KeyboardInterrupt, EOFError) as exc:
                self.console.cursor_moved()
                if question.kind == APPROVAL:
                    question.answer = "deny"
                else:
                    question.error = exc
            finally:
                question.answered.set()

    def _ask_terminal(self, question):
        self.console.fresh_line()
        if question.kind == INPUT:
            reader = getpass.getpass if question.password else input
            return reader(question.text)
        self.console.out.write(TERMINAL_RESET)
        self.console.out.flush()
        reply = input(question.text).strip().lower()
        if reply in ("y", "yes"):
            return "once"
        if reply in ("a", "always"):
            return "conversation"
        return "deny"
