"""The R worker follows the frame table of src/proto/frame_types.h: every
type the host may send a worker is handled or answered with a clear error,
never silently dropped."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from openai4s.kernel.r_kernel import _R_WORKER_SCRIPT, r_argv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "worker"))

from frame_types_h import listed  # noqa: E402


def r_frame_table() -> set:
    source = Path(_R_WORKER_SCRIPT).read_text(encoding="utf-8")
    body = re.search(r"W\$frame_table <- list\((.*?)\n  \)", source, re.S).group(1)
    return set(re.findall(r"^\s*(\w+) = function", body, re.M))


def test_the_r_table_and_shutdown_cover_every_host_to_worker_type():
    assert r_frame_table() | {"shutdown"} == listed("kHostToWorker")


def exchange(lines):
    """The R worker's frames for ``lines``, up to the fence's answer."""
    worker = subprocess.Popen(
        r_argv(shutil.which("Rscript")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        fence = {"type": "stdout_request", "id": "fence"}
        for frame in [*lines, fence, {"type": "shutdown"}]:
            worker.stdin.write((json.dumps(frame) + "\n").encode())
        worker.stdin.close()
        frames = [json.loads(line) for line in worker.stdout]
        assert worker.wait(timeout=60) == 0
    finally:
        worker.kill()
    assert frames[-1]["id"] == "fence"
    return frames[:-1]


def test_frames_r_does_not_serve_are_answered_not_dropped():
    answers = exchange(
        [
            {"type": "host_response", "id": "hc-1", "data": None},
            {"type": "host_ack", "id": "hc-1"},
            {"type": "input_reply", "id": "c-1", "value": "x"},
            {"type": "initialize", "id": "init-1", "skill_attestation_key": "0" * 64},
            {"type": "no_such_type", "id": "x-1"},
            {"type": 5},
        ]
    )
    assert [frame["type"] for frame in answers] == ["log"] * 3 + [
        "initialization_error",
        "log",
        "log",
    ]
    assert "unexpected host_response frame" in answers[0]["msg"]
    assert answers[3] == {
        "type": "initialization_error",
        "id": "init-1",
        "error": "the R worker has no attestation handshake",
    }
    assert 'unknown frame type "no_such_type"' in answers[4]["msg"]
    assert "not a string" in answers[5]["msg"]


def test_a_frame_without_a_type_is_an_execute_as_in_the_python_worker():
    # Spec 3.2; without the host's capture sinks it is refused, but answered.
    (answer,) = exchange([{"id": "c-0", "code": "1 + 1"}])
    assert answer["type"] == "response" and answer["id"] == "c-0"
