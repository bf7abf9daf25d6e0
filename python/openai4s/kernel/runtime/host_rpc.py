"""The worker's raw ``host_call``: one synchronous RPC over the protocol pipe."""

import time

from openai4s.kernel.runtime import threads, wire_json
from openai4s.kernel.runtime.protocol import (
    DISCARD_BUDGET,
    HOST_CALL_WIRE_CAP,
    MAX_FRAME_DEPTH,
    dumps,
)

#: Frames only the main loop may consume.
_REQUESTS = frozenset({"execute", "inspect_variables", "shutdown", "complete", "inspect"})
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

    ``write_line`` writes one whole line under the protocol write lock with
    the SIGINT deferral; ``read_line`` is the identity-checked reader;
    ``host_call_lock`` returns the lock held for a whole transaction;
    ``active_cell`` returns the running Cell's id or None.
    """

    def __init__(
        self, write_line, read_line, host_call_lock, active_cell, defer_request=None
    ) -> None:
        self._write_line = write_line
        self._read_line = read_line
        self._defer_request = defer_request
        self._main_ident = threads.MAIN_IDENT
        self._host_call_lock = host_call_lock
        self._active_cell = active_cell
        self._seq = 0

    def call(self, method, args=None):
        self._seq += 1
        call_id = f"hc-{int(time.time())}-{self._seq}"
        args = list(args) if isinstance(args, tuple) else ([] if args is None else args)
        args = stamp_cell_identity(method, args, self._active_cell())
        text = dumps({"type": "host_call", "id": call_id, "method": method, "args": args})
        # Refused before any lock or write: the host would reject the frame,
        # and a frame it never reads cannot desynchronise the channel.
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
            if _frame_depth(args) + 1 > MAX_FRAME_DEPTH:  # + the frame object
                raise ValueError(
                    f"host call {method!r} arguments nest deeper than the host reads: a "
                    f"frame may be nested at most {MAX_FRAME_DEPTH} levels, the frame and "
                    "its argument list included"
                )
        with self._host_call_lock():
            self._write_line(text + "\n")
            return self._await(method, call_id)

    def _await(self, method, call_id):
        discarded = 0
        while True:
            line = self._read_line()
            if line == "":
                raise RuntimeError("host channel closed during host_call")
            try:
                frame = wire_json.decode(line)
            except (ValueError, RecursionError):
                frame = None
            if self._is_main_loop_request(frame):
                # A thread a Cell left running waited across the end of its
                # Cell; the host has moved on to the next request, which
                # belongs to the main loop, not to this RPC's discard budget.
                self._defer_request(line)
                continue
            if not isinstance(frame, dict) or frame.get("id") != call_id:
                discarded += 1
                if discarded > DISCARD_BUDGET:
                    raise RuntimeError(
                        f"host.{method}: protocol desync, too many out-of-order frames"
                    )
                continue
            if frame.get("type") == "host_ack":
                continue
            if frame.get("error") is not None:
                raise RuntimeError(f"host.{method} error: {frame['error']}")
            return frame.get("data")

    def _is_main_loop_request(self, frame) -> bool:
        return (
            self._defer_request is not None
            and isinstance(frame, dict)
            and frame.get("type") in _REQUESTS
            and threads.current_ident() != self._main_ident
        )


def _frame_depth(value):
    """Array/object nesting of a JSON-encodable value (a scalar is 0), as
    the host's decoder counts it; stops counting past the limit. Level by
    level, queueing only containers (a long flat list costs one pass)."""
    containers = (dict, list, tuple)
    level = [value] if isinstance(value, containers) else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_FRAME_DEPTH:
            return depth
        deeper = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            deeper.extend(child for child in children if isinstance(child, containers))
        level = deeper
    return depth
