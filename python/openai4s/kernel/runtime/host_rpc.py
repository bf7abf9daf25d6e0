"""The worker's raw ``host_call``: one synchronous RPC over the protocol pipe."""

import time

from openai4s.kernel.runtime.frames import frame_depth
from openai4s.kernel.runtime.protocol import HOST_CALL_WIRE_CAP, MAX_FRAME_DEPTH, dumps

#: Methods whose first argument is stamped with the running Cell's identity.
_CELL_STAMPED = frozenset({"save_artifact", "materialise_artifact"})


def stamp_cell_identity(method: str, args, cell_id):
    """Record which Cell asked for an artifact; an explicit producer wins."""
    if method not in _CELL_STAMPED or not cell_id or not args:
        return args
    first = args[0]
    if not isinstance(first, dict):
        return args
    first = dict(first)
    first["executionCellId"] = cell_id
    if "producingCellId" not in first and "producing_cell_id" not in first:
        first["producingCellId"] = cell_id
    return [first, *args[1:]]


class HostChannel:
    """Issues ``host_call`` frames and waits for the matching answer.

    ``exchange`` is the worker's one request/reply helper (frames.Exchange);
    ``active_cell`` returns the running Cell's id or None.
    """

    def __init__(self, exchange, active_cell) -> None:
        self._exchange = exchange
        self._active_cell = active_cell
        self._seq = 0

    def call(self, method, args=None):
        self._seq += 1
        call_id = f"hc-{int(time.time())}-{self._seq}"
        args = list(args) if isinstance(args, tuple) else ([] if args is None else args)
        args = stamp_cell_identity(method, args, self._active_cell())
        text = dumps({"type": "host_call", "id": call_id, "method": method, "args": args})
        _check_the_host_reads(method, text, args)
        reply = self._exchange.request(
            text + "\n",
            call_id,
            _any_reply,
            on_closed=lambda: RuntimeError("host channel closed during host_call"),
            # A thread a Cell left running waited across the end of its Cell;
            # the request is the main loop's, and this call keeps waiting.
            on_request=_keep_waiting,
            desync=f"host.{method}: protocol desync, too many out-of-order frames",
        )
        if reply.get("error") is not None:
            raise RuntimeError(f"host.{method} error: {reply['error']}")
        return reply.get("data")


def _any_reply(frame) -> bool:
    return True


def _keep_waiting() -> None:
    pass


def _check_the_host_reads(method, text, args):
    """Refuse, before any lock or write, a frame the host would reject: a
    frame it never reads cannot desynchronise the channel."""
    if len(text) * 4 > HOST_CALL_WIRE_CAP:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > HOST_CALL_WIRE_CAP:
            raise ValueError(
                f"host call {method!r} payload is {size} bytes, exceeding the "
                "15MB wire cap (the host rejects oversized frames)"
            )
    # Brackets in the text bound the depth from above (at C speed); only
    # a payload with more of them than the limit is walked.
    if text.count("[") + text.count("{") > MAX_FRAME_DEPTH:
        if frame_depth(args) + 1 > MAX_FRAME_DEPTH:  # + the frame object
            raise ValueError(
                f"host call {method!r} arguments nest deeper than the host reads: a "
                f"frame may be nested at most {MAX_FRAME_DEPTH} levels, the frame and "
                "its argument list included"
            )
