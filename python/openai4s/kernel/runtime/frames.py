"""The worker's one wire reader: frame types, the frame decoder, and the
single "send a request and wait for the reply to it" helper.

``channel`` owns the protocol descriptors and reads lines; everything that
turns a line into a frame is here, so the main loop (``session``), the
handshake, host calls (``host_rpc``) and ``input()`` (``stdin_channel``)
share one rule for a malformed line and one for a frame that is not the
awaited reply. The type names match ``src/proto/frame_types.h`` (a test
holds the two to the same set).

The decoder gives the host codec's answer for every line of the protocol
corpus (tests/protocol/frames.jsonl): where the two used to differ, the
stricter answer won (no NaN/Infinity, no out-of-range float, no lone
surrogate, valid UTF-8 only, at most MAX_FRAME_DEPTH levels, JSON
whitespace only), and an integer past 64 bits reads as a double, as the
host's decoder keeps it.
"""

import _json

from openai4s.kernel.runtime import channel, wire_json
from openai4s.kernel.runtime.channel import UndecodableLine
from openai4s.kernel.runtime.protocol import DISCARD_BUDGET, MAX_FRAME_DEPTH

# --- frame types (src/proto/frame_types.h) -----------------------------------

#: kHostToWorker: every type the host may send a worker.
HOST_TO_WORKER = frozenset(
    {
        "initialize",
        "execute",
        "host_response",
        "host_ack",
        "inspect_variables",
        "shutdown",
        "stdout_request",
        "complete",
        "inspect",
        "is_complete",
        "input_reply",
        "adopt",
        "interrupt",
    }
)
#: Answers to a worker's own request; one nobody waits for any more (its
#: waiter was interrupted) is stale, and the main loop drops it.
REPLIES = frozenset({"host_response", "host_ack", "input_reply"})
#: The host->worker types only the main loop consumes (all but the
#: handshake's and the replies): a waiter that reads one hands it to the
#: main loop (``channel.defer_request``).
MAIN_LOOP_REQUESTS = HOST_TO_WORKER - REPLIES - {"initialize"}

# --- the decoder ---------------------------------------------------------------

#: JSON's whitespace; str.strip() would also take a form feed or U+00A0.
JSON_WHITESPACE = " \t\r\n"
#: decode()'s answer for a line of JSON whitespace only.
BLANK = object()


class MalformedFrame(ValueError):
    """A line that is not one frame of the protocol."""


def _refuse_constant(name):
    raise MalformedFrame(f"{name} is not JSON")


def _finite_float(text):
    value = float(text)
    if value == _INFINITY or value == -_INFINITY:
        raise MalformedFrame(f"number out of range: {text[:40]}")
    return value


_INFINITY = float("inf")
#: The host's decoder keeps an integer in [-2**63, 2**64) exactly, else as a double.
_INT_MIN, _INT_END = -(2**63), 2**64


def _int_or_double(text):
    value = int(text)
    if len(text) < 19 or _INT_MIN <= value < _INT_END:
        return value
    return _finite_float(text)


class _FrameSettings:
    """The C scanner's context: strict strings, no constants, finite numbers."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = staticmethod(_finite_float)
    parse_int = staticmethod(_int_or_double)
    parse_constant = staticmethod(_refuse_constant)


_scan_frame = _json.make_scanner(_FrameSettings())


def decode(line: str):
    """The value one protocol line holds, or BLANK; MalformedFrame if the
    host's codec would refuse the line too."""
    # lstrip, not strip: it copies nothing from a line that starts a value.
    if not line.lstrip(JSON_WHITESPACE):
        return BLANK
    if type(line) is not str and isinstance(line, UndecodableLine):
        raise MalformedFrame("not valid UTF-8")
    try:
        value = wire_json.scan(_scan_frame, line)
    except MalformedFrame:
        raise
    except (ValueError, RecursionError) as error:
        # RecursionError: deeper than the C scanner recurses; malformed too.
        raise MalformedFrame(str(error)) from None
    # Only a line long enough to hold the limit's brackets can pass it, and
    # only one with more brackets than that (counted at C speed) is walked.
    if len(line) > 2 * MAX_FRAME_DEPTH and line.count("[") + line.count("{") > MAX_FRAME_DEPTH:
        if frame_depth(value) > MAX_FRAME_DEPTH:
            raise MalformedFrame(f"nested deeper than {MAX_FRAME_DEPTH} levels")
    if "\\u" in line and ("\\ud" in line or "\\uD" in line):
        _check_no_lone_surrogate(value)
    return value


def _check_no_lone_surrogate(value):
    # An escaped pair decodes to one astral character; a lone half stays a
    # surrogate, which the UTF-8 encoder refuses.
    try:
        wire_json.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedFrame("a lone surrogate is not Unicode") from None


def frame_depth(value):
    """Array/object nesting of a JSON value (a scalar is 0), as the host's
    decoder counts it; stops counting past the limit. Level by level,
    queueing only containers (a long flat list costs one pass)."""
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


def decode_frame(line: str):
    """The frame dict a line holds, or None (blank, malformed, not an object)."""
    try:
        frame = decode(line)
    except MalformedFrame:
        return None
    return frame if isinstance(frame, dict) else None


def interrupts_waiting():
    """The `seq` of each `interrupt` frame the host has already written,
    read off the pipe without waiting for more; every other line goes back
    to the main loop, in order (kernel/cell_interrupts.h)."""
    seqs = set()
    for line in channel.waiting_lines():
        frame = decode_frame(line)
        if frame is not None and frame.get("type") == "interrupt":
            seqs.add(frame.get("seq"))
        else:
            channel.defer_request(line)
    return seqs


# --- one request, one reply ------------------------------------------------------


class Exchange:
    """Sends a worker request (a host call, an input request) and reads the
    pipe until the host's reply to it, under the host-call lock (one
    transaction at a time).

    The one rule for what else arrives meanwhile: a ``host_ack`` for the
    awaited id means keep waiting; a main-loop request (only a thread a Cell
    left running can read one: the host has moved on) goes back to the main
    loop, and the caller's ``on_request`` decides whether waiting still
    makes sense (an ``interrupt`` frame goes back too, with no
    ``on_request``: it precedes this Cell's SIGINT, and the host has not
    moved on); anything else (a late reply a SIGINT abandoned, a
    malformed line) is discarded, and more than DISCARD_BUDGET of those is
    a desync.
    """

    def __init__(self, write_line, read_line, host_call_lock, defer_request) -> None:
        self._write_line = write_line
        self._read_line = read_line
        self._host_call_lock = host_call_lock
        self._defer_request = defer_request

    def request(self, line, awaited_id, is_reply, *, on_closed, on_request, desync):
        """Write ``line`` and return the reply frame: the first dict with
        ``awaited_id`` that ``is_reply`` accepts. ``on_closed()`` and
        ``desync`` (a message) build the exceptions for the end of the
        stream and a desync; ``on_request()`` may raise to stop waiting."""
        with self._host_call_lock():
            self._write_line(line)
            discarded = 0
            while True:
                text = self._read_line()
                if text == "":
                    raise on_closed()
                frame = decode_frame(text)
                kind = None if frame is None else frame.get("type")
                if kind == "interrupt":
                    # Sent before the SIGINT that stops this Cell (or kept
                    # for the next one): the host has not moved on, so the
                    # wait goes on, and the main loop still sees the frame.
                    self._defer_request(text)
                    continue
                if isinstance(kind, str) and kind in MAIN_LOOP_REQUESTS:
                    self._defer_request(text)
                    on_request()
                    continue
                if frame is not None and frame.get("id") == awaited_id:
                    if kind == "host_ack":
                        continue
                    if is_reply(frame):
                        return frame
                discarded += 1
                if discarded > DISCARD_BUDGET:
                    raise RuntimeError(desync)
