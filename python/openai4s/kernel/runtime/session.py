"""One worker's session: its namespace, and the loop that reads requests
and answers each with one frame (a Cell's response, a variables listing, a
completion, ...), until ``shutdown`` or the end of protocol IN."""

import builtins
import os

from openai4s.kernel.runtime import channel, display, env_restore, frames
from openai4s.kernel.runtime.cell_execution import CellExecution, response_line
from openai4s.kernel.runtime.cell_namespace import CellNamespace
from openai4s.kernel.runtime.host_rpc import HostChannel
from openai4s.kernel.runtime.stdin_channel import InputChannel
from openai4s.kernel.runtime.stdin_channel import install as install_input

_INVALID_JSON_RESPONSE = {
    "type": "response",
    "id": "unknown",
    "stdout": "",
    "stderr": "",
    "error": "invalid JSON request",
    "interrupted": False,
    "trace": {"error_lineno": None, "error_call": None},
    "usage": {},
}


#: A handler's answer that ends the main loop.
_STOP = object()


def _stop(request):
    return _STOP


def _ignore(request):
    return None


class Session:
    """``wire`` is the entry point's frame writer and SIGINT discipline
    (``worker._Wire``); ``observer``/``sidecars`` come from the handshake."""

    def __init__(self, wire, mode, observer, sidecars, native=None):
        self.wire = wire
        self.mode = mode
        self.namespace = {"__name__": "__openai4s__", "__builtins__": builtins}
        self.exchange = frames.Exchange(
            wire.write_line, channel.read_line, wire.host_call_lock, channel.defer_request
        )
        self.host = HostChannel(self.exchange, lambda: self.cells.cell_id)
        self.cells = CellExecution(
            wire,
            self.namespace,
            observer,
            sidecars,
            CellNamespace(self.namespace, mode, self.host.call, wire.log),
            native=native,
        )
        self._install_cell_io()
        self._env_restored = False

    @property
    def cell_id(self):
        return self.cells.cell_id

    @property
    def origin(self):
        return self.cells.origin

    def serve(self):
        wire = self.wire
        # What every first Cell would do first (the host facade, provenance),
        # done while nothing is asked yet: a Jupyter client leaves a new
        # worker idle for its 0.2 s iopub flush, so its first cell starts
        # warm. With a request already waiting, that request does it.
        if not channel.request_waiting():
            self.cells.cell_namespace.install()
        handlers = self.handlers()
        while True:
            # Under the host-call lock: a thread left running by a Cell that
            # calls the host between Cells must not read its answer here (or
            # we its next request); it waits until a Cell is running again.
            with wire.host_call_lock():
                line = channel.next_request_line()
            if line == "":
                return
            try:
                request = frames.decode(line)
            except frames.MalformedFrame:
                wire.write_frame(_INVALID_JSON_RESPONSE)
                continue
            if not isinstance(request, dict):
                continue  # a blank line, or JSON that is no frame
            kind = request.get("type", "execute")
            # A type that is no str, or one not in the table, asks nothing.
            handler = handlers.get(kind) if isinstance(kind, str) else None
            if handler is not None and handler(request) is _STOP:
                return

    def handlers(self):
        """The main loop's table: every type the host may send a worker
        (frames.HOST_TO_WORKER, src/proto/frame_types.h) to its handler."""
        return {
            "execute": self._execute,
            "inspect_variables": self._inspect_variables,
            "stdout_request": self._stdout_request,
            "is_complete": self._is_complete,
            "complete": self._code_help,
            "inspect": self._code_help,
            "adopt": self._adopt,
            # Names the Cell an interrupt was for; read here it came before
            # that Cell's execute (or after it ended, and is stale).
            "interrupt": self._interrupt,
            "shutdown": _stop,
            # The handshake's, read once before this loop.
            "initialize": _ignore,
            # Late answers to a host call or input() a SIGINT abandoned.
            "host_response": _ignore,
            "host_ack": _ignore,
            "input_reply": _ignore,
        }

    # The helpers' modules (codeop, the inspector) load on the first such
    # request, not at every kernel's start.

    def _inspect_variables(self, request):
        from openai4s.kernel.runtime import code_help

        self.wire.write_frame(code_help.variables_reply(self.namespace, request))

    def _stdout_request(self, request):
        from openai4s.kernel.runtime import code_help

        reply = code_help.last_stdout_reply(self.cells.last_stdout, request.get("id"))
        self.wire.write_frame(reply)

    def _is_complete(self, request):
        from openai4s.kernel.runtime import code_completeness

        self.wire.write_frame(code_completeness.reply(request))

    def _code_help(self, request):
        from openai4s.kernel.runtime import code_help

        self.wire.write_frame(code_help.code_help_reply(self.namespace, request["type"], request))

    def _adopt(self, request):
        # A warm worker (a pool's, a standby) is claimed: it learns the
        # generation its bash capabilities are bound to only now, so none
        # it could have seen before serves the kernel that claimed it.
        # Not answered: the host sends the next request right behind it.
        generation = request.get("generation")
        if isinstance(generation, str) and generation:
            os.environ["OPENAI4S_KERNEL_GENERATION"] = generation

    def _interrupt(self, request):
        self.wire.note_interrupt_frame(request)

    def _execute(self, request):
        if not self._env_restored:
            self._env_restored = True
            env_restore.restore()
        cell_id = request.get("id")
        cell_id = "unknown" if cell_id is None else cell_id
        code = request.get("code", "")
        try:
            response = self.cells.run_cell(
                code,
                cell_id,
                request.get("origin", "agent"),
                as_result=request.get("last_value") == "result",
                name=request.get("cell_name"),
                stream_all=request.get("stream") == "all",
                seq=request.get("seq"),
            )
            self.wire.write_line(response_line(response))
        finally:
            # After the response, so the host has the result before the disk
            # write; before the next read, so the file is whole before any
            # later request is processed.
            self.cells.finish_spills()

    def _install_cell_io(self):
        """display() in builtins, input()/getpass() over the protocol."""
        builtins.display = display.display
        channel_ = InputChannel(
            self.exchange, lambda: self.cells.cell_id, self.wire.interrupt_from_caller
        )
        install_input(channel_, builtins)
