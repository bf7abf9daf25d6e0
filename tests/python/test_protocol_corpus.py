"""The shared protocol corpus (tests/protocol/frames.jsonl) against the
worker's half of the protocol, and against the host's codec reached through
openai4s._core; tests/cpp/unit/protocol_corpus_test.cpp runs the same
entries against the C++ codec directly.

Each entry is one wire line and ``expect``, the one answer both sides give
(where they used to differ, the stricter answer won). Outcomes: ``ok`` (a
JSON object), ``not_object`` (JSON, but no frame), ``blank`` (skipped: the
host reads ``{}``, the worker skips the line), ``malformed`` and
``oversize`` (a worker_to_host line over the frame cap: the host's bounded
reader drops it, and the worker never writes one).
"""

import binascii
import collections
import json
import os
import re
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from openai4s import _core
from openai4s.kernel.runtime import channel, frames, protocol
from openai4s.kernel.runtime.session import _INVALID_JSON_RESPONSE

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "protocol" / "frames.jsonl"
FRAME_TYPES = ROOT / "src" / "proto" / "frame_types.h"
sys.path.insert(0, str(ROOT / "tests" / "python" / "worker"))

from worker_harness import WorkerProcess  # noqa: E402

ENTRIES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]
BY_NAME = {entry["name"]: entry for entry in ENTRIES}


def entries(predicate=lambda entry: True):
    chosen = [entry for entry in ENTRIES if predicate(entry)]
    return pytest.mark.parametrize("entry", chosen, ids=[entry["name"] for entry in chosen])


def wire(entry) -> bytes:
    if "line" in entry:
        return entry["line"].encode("utf-8")
    if "line_hex" in entry:
        return binascii.unhexlify(entry["line_hex"])
    return b"".join(piece.encode("utf-8") * times for piece, times in entry["build"])


def expects(entry) -> str:
    return entry["expect"]


def is_big(entry) -> bool:
    return "build" in entry


# --- the worker's side --------------------------------------------------------


def _through_pipe(data: bytes, read):
    """``read(fd)`` on the read end of a pipe a thread fills with ``data``."""
    read_fd, write_fd = os.pipe()

    def feed():
        with os.fdopen(write_fd, "wb") as out:
            try:
                out.write(data)
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        return read(read_fd)
    finally:
        os.close(read_fd)
        writer.join()


def worker_line(data: bytes) -> str:
    """The line the worker's protocol reader (channel.LineIn) hands over."""
    return _through_pipe(data, lambda fd: channel.LineIn(fd).readline())


def worker_reads(data: bytes):
    """(outcome, value) for one line as the worker reads every frame: its
    line reader, then frames.decode (the main loop, the handshake, host
    calls and input() share it)."""
    line = worker_line(data)
    try:
        value = frames.decode(line)
    except frames.MalformedFrame:
        return "malformed", None
    if value is frames.BLANK:
        return "blank", None
    return ("ok" if isinstance(value, dict) else "not_object"), value


def worker_writes(frame) -> bytes:
    """The bytes the worker's protocol stream puts on the wire for ``frame``:
    its encoder, through the same text stream setup (channel._wrap_out)."""
    read_fd, write_fd = os.pipe()
    chunks = []

    def drain():
        while True:
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out = channel._wrap_out(write_fd)
    try:
        out.write(protocol.encode_frame(frame))
        out.flush()
    finally:
        out.close()
        reader.join()
        os.close(read_fd)
    return b"".join(chunks)


# --- the host's side, through the C++ core ----------------------------------


class _ScriptedTransport:
    """A transport the C++ manager reads lines from and writes lines to."""

    def __init__(self):
        self.written = []
        self.incoming = collections.deque()
        self.process = None
        self.stderr_tail = None
        #: Only the handshake is answered; later lines are just recorded.
        self.handshaking = True

    def write_line(self, line):
        self.written.append(line)
        frame = json.loads(line)
        if self.handshaking and frame.get("type") == "initialize":
            reply = {"type": "initialized", "id": frame["id"]}
            self.incoming.append(json.dumps(reply) + "\n")

    def read_line(self):
        return self.incoming.popleft() if self.incoming else ""

    def alive(self):
        return True

    def interrupt(self):
        return False

    def kill(self):
        pass

    def close(self, *, graceful=True):
        pass


class _Owner:
    dispatcher = None


class HostCodec:
    """The host's encode_frame / decode_frame, as KernelCore uses them."""

    def __init__(self):
        self.transport = _ScriptedTransport()
        self._owner = _Owner()
        self.core = _core.KernelCore(
            self._owner,
            cwd=None,
            mode="repl",
            python=sys.executable,
            env_root=None,
            env_name=None,
            argv=None,
            worker_script="",
            repo_root="",
            transport_factory=lambda: self.transport,
        )
        self.core.start(10.0)
        self.transport.handshaking = False

    def encode(self, value) -> str:
        self.core.send(value)
        return self.transport.written[-1]

    def decode(self, data: bytes):
        """(outcome, value): the line is the only one left, so a malformed
        line (counted, skipped) reads as the end of the stream."""
        before = self.core.malformed_frames
        self.transport.incoming.append(data)
        value = self.core.readline()
        if self.core.malformed_frames == before + 1:
            assert value is None
            return "malformed", None
        assert self.core.malformed_frames == before
        if value == {} and not data.strip(b" \t\r\n"):
            return "blank", value
        return ("ok" if isinstance(value, dict) else "not_object"), value

    def close(self):
        self.core.shutdown()


@pytest.fixture(scope="module")
def host():
    codec = HostCodec()
    yield codec
    codec.close()


#: An entry that pins no decoded value (null is a value).
UNPINNED = object()


def decoded_for(entry):
    """The value both sides must decode, or UNPINNED."""
    return entry.get("decoded", UNPINNED)


def same_json(a, b) -> bool:
    # One canonical spelling: dict order does not matter, but an int that
    # came back as a float (or lost a digit) does.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# --- the checks ---------------------------------------------------------------


def test_the_corpus_and_frame_types_h_name_the_same_types():
    header = FRAME_TYPES.read_text(encoding="utf-8")
    constants = dict(re.findall(r'std::string_view (k\w+) = "(\w+)";', header))

    def listed(array):
        body = re.search(rf"{array} = \{{(.*?)\}};", header, re.S).group(1)
        return {constants[name] for name in re.findall(r"k\w+", body)}

    for direction, array in (
        ("host_to_worker", "kHostToWorker"),
        ("worker_to_host", "kWorkerToHost"),
    ):
        in_corpus = {
            entry["type"]
            for entry in ENTRIES
            if entry["direction"] == direction
            and expects(entry) == "ok"
            and isinstance(entry["type"], str)
        }
        assert in_corpus == listed(array), direction


@entries(lambda entry: expects(entry) != "oversize")
def test_every_line_reads_as_the_worker_expects(entry):
    outcome, value = worker_reads(wire(entry))
    assert outcome == expects(entry)
    want = decoded_for(entry)
    if want is not UNPINNED:
        assert same_json(value, want)
    if outcome == "ok" and entry.get("type") is not None:
        assert value.get("type") == entry["type"]


@entries(lambda entry: is_big(entry) and entry["direction"] == "worker_to_host")
def test_the_worker_never_writes_a_line_over_the_cap(entry):
    line = wire(entry)
    frame = json.loads(line)
    written = worker_writes(frame)
    assert len(written) <= protocol.MAX_FRAME_BYTES
    if entry["worker_encode"] == "kept":
        assert written == line
        return
    replacement = json.loads(written)
    assert replacement == protocol._oversized_replacement(frame)
    if frame["type"] == "response":
        assert replacement["id"] == frame["id"] and replacement["error"].startswith(
            "kernel dropped an oversized 'response' frame"
        )
    else:
        assert replacement["type"] == "log"


@entries(lambda entry: expects(entry) != "oversize")
def test_every_line_decodes_as_the_host_expects(entry, host):
    outcome, value = host.decode(wire(entry))
    assert outcome == expects(entry)
    want = decoded_for(entry)
    if want is not UNPINNED:
        assert same_json(value, want)


@entries(lambda entry: is_big(entry) and entry["direction"] == "worker_to_host")
def test_big_lines_meet_the_hosts_bounded_reader(entry, tmp_path):
    # The real pipe transport and its reader: a child writes the line.
    line = wire(entry)
    source = tmp_path / "line"
    source.write_bytes(line)
    script = f"import sys; sys.stdout.buffer.write(open({str(source)!r}, 'rb').read())"
    transport = _core.PipeTransport([sys.executable, "-c", script], cwd=None, env={})
    try:
        if expects(entry) == "oversize":
            with pytest.raises(RuntimeError, match="oversized frame"):
                transport.read_line()
        else:
            assert transport.read_line().encode("utf-8") == line
        assert transport.read_line() == ""  # aligned: the end comes next
    finally:
        transport.close(graceful=False)


@entries(lambda entry: "worker_encoded" in entry)
def test_the_worker_writes_each_frame_as_pinned(entry):
    frame = json.loads(entry["worker_value_json"]) if "worker_value_json" in entry else None
    frame = entry["decoded"] if frame is None else frame
    assert worker_writes(frame) == entry["worker_encoded"].encode("utf-8")


@entries(lambda entry: "host_encoded" in entry)
def test_the_host_writes_each_frame_as_pinned(entry, host):
    assert host.encode(entry["decoded"]) == entry["host_encoded"]


@entries(lambda entry: "host_encoded" in entry)
def test_what_the_host_writes_the_worker_reads_back(entry, host):
    line = host.encode(entry["decoded"])
    outcome, value = worker_reads(line.encode("utf-8"))
    assert outcome == "ok"
    assert same_json(value, entry["decoded"])


@entries(lambda entry: "worker_encoded" in entry)
def test_what_the_worker_writes_the_host_reads_back(entry, host):
    written = worker_writes(entry["decoded"])
    outcome, value = host.decode(written)
    assert outcome == "ok"
    assert same_json(value, entry["decoded"])


# --- a real worker's main loop ----------------------------------------------


@pytest.fixture(scope="module")
def live_worker():
    with tempfile.TemporaryDirectory() as cwd:
        worker = WorkerProcess(cwd)
        try:
            worker.handshake()
            yield worker
        finally:
            worker.kill()


def _answers(worker, data: bytes, fence_id: str):
    """Frames the worker sends for one line, up to the fence's answer."""
    if not data.endswith(b"\n"):
        data += b"\n"
    worker.proc.stdin.write(data)
    worker.send({"type": "stdout_request", "id": fence_id})
    worker.proc.stdin.flush()
    frames = []
    while True:
        frame = worker.read()
        assert frame is not None, f"worker exited; stderr:\n{worker.stderr}"
        if frame.get("type") == "stdout_text" and frame.get("id") == fence_id:
            return frames
        frames.append(frame)


@entries(lambda entry: "worker_answers" in entry)
def test_a_real_worker_answers_each_line_as_pinned(entry, live_worker):
    frames = _answers(live_worker, wire(entry), f"fence-{entry['name']}")
    assert [frame.get("type") for frame in frames] == entry["worker_answers"]
    if expects(entry) == "malformed":
        assert frames == [_INVALID_JSON_RESPONSE]


@entries(lambda entry: entry.get("worker_exits"))
def test_lines_that_end_the_worker(entry, tmp_path):
    worker = WorkerProcess(tmp_path)
    try:
        worker.handshake()
        worker.proc.stdin.write(wire(entry))
        worker.proc.stdin.flush()
        assert worker.read() is None  # end of stream, nothing said first
        code = worker.proc.wait(timeout=30)
        assert code == 0
    finally:
        worker.kill()
