"""One worker's session: its namespace, and the loop that reads requests
and answers each with one frame (a Cell's response, a variables listing, a
completion, ...), until ``shutdown`` or the end of protocol IN."""

import builtins

from openai4s.kernel.runtime import channel, display, wire_json
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


class Session:
    """``wire`` is the entry point's frame writer and SIGINT discipline
    (``worker._Wire``); ``observer``/``sidecars`` come from the handshake."""

    def __init__(self, wire, mode, observer, sidecars, native=None):
        self.wire = wire
        self.mode = mode
        self.namespace = {"__name__": "__openai4s__", "__builtins__": builtins}
        self.host = HostChannel(
            wire.write_line,
            channel.read_line,
            wire.host_call_lock,
            lambda: self.cells.cell_id,
            channel.defer_request,
        )
        self.cells = CellExecution(
            wire,
            self.namespace,
            observer,
            sidecars,
            CellNamespace(self.namespace, mode, self.host.call, wire.log),
            native=native,
        )
        self._install_cell_io()

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
        while True:
            # Under the host-call lock: a thread left running by a Cell that
            # calls the host between Cells must not read its answer here (or
            # we its next request); it waits until a Cell is running again.
            with wire.host_call_lock():
                line = channel.next_request_line()
            if line == "":
                return
            if not line.strip():
                continue
            try:
                request = wire_json.decode(line)
            except (ValueError, RecursionError):
                # RecursionError: a line nested deeper than the C scanner
                # allows is malformed input, not the end of the worker.
                wire.write_frame(_INVALID_JSON_RESPONSE)
                continue
            if not isinstance(request, dict):
                continue
            kind = request.get("type", "execute")
            if kind == "shutdown":
                return
            if kind == "execute":
                self._execute(request)
                continue
            # The helpers' modules (codeop, the inspector) load on the first
            # such request, not at every kernel's start.
            from openai4s.kernel.runtime import code_completeness, code_help

            if kind == "inspect_variables":
                wire.write_frame(code_help.variables_reply(self.namespace, request))
            elif kind == "stdout_request":
                reply = code_help.last_stdout_reply(self.cells.last_stdout, request.get("id"))
                wire.write_frame(reply)
            elif kind == "is_complete":
                wire.write_frame(code_completeness.reply(request))
            elif kind in ("complete", "inspect"):
                wire.write_frame(code_help.code_help_reply(self.namespace, kind, request))
            # Anything else -- notably the late answer to an RPC a SIGINT
            # abandoned -- is not a request.

    def _execute(self, request):
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
        wire = self.wire
        channel_ = InputChannel(
            wire.write_line,
            channel.read_line,
            wire.host_call_lock,
            lambda: self.cells.cell_id,
            channel.defer_request,
            wire.interrupt_from_caller,
        )
        install_input(channel_, builtins)
