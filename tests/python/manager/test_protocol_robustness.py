"""The manager's reader against a worker that breaks the frame protocol:
counted, reported, never a crash or a hang, and the kernel stays usable."""

import pytest

from openai4s.kernel import Kernel

from manager_support import fake_worker_factory


@pytest.mark.parametrize("mode", ["garbage", "oversized"])
def test_malformed_worker_frames_are_counted_and_skipped(mode):
    with Kernel(transport_factory=fake_worker_factory("misbehaving.py", mode)) as k:
        result = k.execute("anything")
        assert result["stdout"] == "still here\n"
        assert k.malformed_frames >= 1
        assert any("dropped" in line for line in k.worker_log_tail)
        # Aligned afterwards: the next cell gets its own response.
        assert k.execute("again")["stdout"] == "still here\n"


def test_a_worker_that_dies_mid_cell_reports_its_last_words():
    with Kernel(transport_factory=fake_worker_factory("misbehaving.py", "die")) as k:
        with pytest.raises(RuntimeError, match="exited unexpectedly") as caught:
            k.execute("anything")
        assert "the worker fell over" in str(caught.value)
        assert not k.is_alive()
        with pytest.raises(RuntimeError, match="not alive"):
            k.execute("again")


def test_a_worker_flooding_stderr_cannot_deadlock_a_cell():
    with Kernel(transport_factory=fake_worker_factory("misbehaving.py", "noisy-stderr")) as k:
        assert k.execute("anything")["stdout"] == "still here\n"
        tail = k._stderr_tail
        assert tail.truncated
        assert tail.retained_bytes == 65536


def test_proc_stdin_writes_reach_the_same_pipe_in_order(kernel):
    """`_proc.stdin` is the protocol pipe itself: a raw line written through
    it counts against the worker's discard budget exactly like a frame sent
    with `_send`. Eight stale frames plus one raw line is one past the
    budget, so the call must fail with a desync; had the raw line been lost,
    the eight frames alone would be tolerated."""
    original = kernel._service_host_call

    def flood(frame):
        for i in range(8):
            kernel._send({"type": "host_response", "id": f"stale-{i}", "data": None})
        kernel._proc.stdin.write("not json at all\n")
        kernel._proc.stdin.flush()

    kernel._service_host_call = flood
    result = kernel.execute(
        "try:\n    host._call('ping', [])\nexcept RuntimeError as e:\n    print('caught:', e)"
    )
    assert "protocol desync" in result["stdout"]
    kernel._service_host_call = original
    assert kernel.execute("print(host._call('ping', []))")["stdout"].strip() == "pong"


NESTED_CALL = """
nested = []
inner = nested
for _ in range({levels} - 1):
    inner.append([])
    inner = inner[0]
try:
    host._call('echo', [nested])
    print('answered')
except ValueError as exc:
    print('refused:', exc)
"""


def test_a_host_call_nested_past_the_hosts_limit_is_refused_in_the_cell(tmp_path):
    # The host reads frames nested at most 256 deep and refuses a deeper one
    # unread; the worker used to send it anyway and wait for an answer that
    # never came. The frame and its argument list are two of the levels.
    import re
    import threading
    from pathlib import Path

    from openai4s.kernel.runtime import protocol

    limits = Path(__file__).resolve().parents[3] / "src" / "proto" / "limits.h"
    declared = re.search(r"kMaxFrameDepth = (\d+);", limits.read_text(encoding="utf-8"))
    assert int(declared.group(1)) == protocol.MAX_FRAME_DEPTH

    with Kernel(cwd=str(tmp_path), dispatcher=lambda method, args: "pong") as k:
        deepest = protocol.MAX_FRAME_DEPTH - 2
        assert k.execute(NESTED_CALL.format(levels=deepest))["stdout"] == "answered\n"
        guard = threading.Timer(30, k.interrupt)  # the old behaviour: a hang
        guard.start()
        try:
            result = k.execute(NESTED_CALL.format(levels=deepest + 1))
        finally:
            guard.cancel()
        assert result["error"] is None, result
        assert result["stdout"].startswith("refused: host call 'echo' arguments nest deeper")
        assert f"at most {protocol.MAX_FRAME_DEPTH} levels" in result["stdout"]
        assert k.execute("print(host._call('echo', [[1]]))")["stdout"] == "pong\n"
