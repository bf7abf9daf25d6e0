"""``input()`` and ``getpass()`` for Cells, answered by the host's caller.

fd 0 of the worker reads /dev/null (the protocol must never be readable by
a Cell), so the builtins are replaced: each call sends one
``input_request`` frame and waits for its ``input_reply`` on the protocol
pipe, under the host-call lock (one transaction at a time, as a host call).
The host answers from ``execute(..., on_input=...)``, or with an error when
the caller gave none. A SIGINT while waiting interrupts the Cell as usual;
a late reply is then just a frame the next reader skips.
"""

import sys

from openai4s.kernel.runtime import import_watch

#: The longest prompt sent (a prompt is a label, not a payload).
MAX_PROMPT_CHARS = 10_000


class StdinNotImplementedError(RuntimeError):
    """No input channel: the kernel's caller did not pass ``on_input``."""


class InputChannel:
    """Sends input_request frames for the running Cell and awaits replies.

    ``exchange`` is the worker's one request/reply helper (frames.Exchange);
    ``active_cell`` returns the running Cell's id; ``on_interrupt`` turns a
    caller-side interrupt (Ctrl-C at the prompt) into this Cell's interrupt.
    """

    def __init__(self, exchange, active_cell, on_interrupt):
        self._exchange = exchange
        self._active_cell = active_cell
        self._on_interrupt = on_interrupt
        self._seq = 0

    def ask(self, prompt="", password=False):
        from openai4s.kernel.runtime.protocol import dumps

        cell_id = self._active_cell()
        if cell_id is None:
            raise StdinNotImplementedError("no input channel: no cell is running")
        prompt = "" if prompt is None else str(prompt)
        if len(prompt) > MAX_PROMPT_CHARS:
            prompt = prompt[:MAX_PROMPT_CHARS] + "…"
        # Written prompts before the question, so a front end shows them in order.
        try:
            sys.stdout.flush()
        except Exception:
            pass
        self._seq += 1
        seq = self._seq
        frame = {
            "type": "input_request",
            "id": cell_id,
            "prompt": prompt,
            "password": bool(password),
            "seq": seq,
        }
        # A reply for another seq is late (an input() a SIGINT abandoned).
        reply = self._exchange.request(
            dumps(frame) + "\n",
            cell_id,
            lambda got: got.get("type") == "input_reply" and got.get("seq", seq) == seq,
            on_closed=lambda: EOFError("the host closed the kernel while waiting for input"),
            on_request=_cell_finished,
            desync="input(): protocol desync, too many unexpected frames",
        )
        return self._value(reply)

    def _value(self, reply):
        if reply.get("interrupt"):
            self._on_interrupt()
        error = reply.get("error")
        if error is not None:
            raise StdinNotImplementedError(str(error))
        value = reply.get("value")
        if not isinstance(value, str):
            raise StdinNotImplementedError("the host's input reply carried no text")
        return value


def _cell_finished():
    # Only a thread outliving its Cell sees the next request: nobody is
    # left to answer its input().
    raise StdinNotImplementedError("no input channel: the cell has finished")


def make_input(channel):
    def input(prompt=""):  # noqa: A001 - replaces the builtin on purpose
        """Read a line from the kernel's caller (``execute(on_input=...)``)."""
        value = channel.ask(prompt, False)
        # As the builtin: one line, no trailing newline.
        return value[:-1] if value.endswith("\n") else value

    return input


def make_getpass(channel):
    def getpass(prompt="Password: ", stream=None):
        """Read a secret from the kernel's caller; it is not echoed there."""
        value = channel.ask(prompt, True)
        return value[:-1] if value.endswith("\n") else value

    return getpass


def install(channel, builtins_module):
    """Replace ``input`` and ``getpass.getpass`` for Cells."""
    builtins_module.input = make_input(channel)
    replacement = make_getpass(channel)

    def replace_getpass(getpass_module):
        getpass_module.getpass = replacement

    # At getpass's import, not now: it brings termios, and most Cells never
    # ask for a password.
    import_watch.when_imported("getpass", replace_getpass)
