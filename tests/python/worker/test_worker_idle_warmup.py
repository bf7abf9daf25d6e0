"""A new worker with nothing asked of it prepares what every first Cell
needs (the host facade, the provenance hooks), so a Jupyter client's first
cell, sent after its 0.2 s iopub flush, starts warm; a request that is
already waiting is served first instead."""

import json
import platform
import time

import pytest

# read(2)'s number, for /proc/<pid>/syscall.
_READ = {"x86_64": 0, "aarch64": 63}.get(platform.machine())


def _host_is_known(worker):
    # Code help reads the namespace without running a Cell, so it sees what
    # is there before any Cell ran.
    worker.send({"type": "inspect", "id": "help-1", "code": "host", "cursor": 4})
    return worker.read()["found"]


def _blocked_in_read(pid, timeout=30):
    """Wait until the worker sleeps in read(2): its main loop waiting for
    the next request, i.e. past whatever it does before that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/syscall") as handle:
            number = handle.read().split()[0]
        if state == "S" and number == str(_READ):
            return
        time.sleep(0.01)
    raise AssertionError("the worker never waited for a request")


@pytest.mark.skipif(_READ is None, reason=f"read(2)'s number unknown on {platform.machine()}")
def test_an_idle_new_worker_has_the_host_facade_before_its_first_cell(spawn):
    worker = spawn()
    _blocked_in_read(worker.proc.pid)
    assert _host_is_known(worker) is True
    response, _ = worker.execute("host is openai4s")
    assert response["error"] is None
    assert response["stdout"] == "True\n"


def test_a_request_waiting_at_the_handshake_is_served_before_any_preparation(spawn):
    worker = spawn(handshake=False)
    # One write, so the code-help request is certainly waiting behind the
    # initialize frame when the handshake ends: it is answered from the bare
    # namespace.
    frames = [
        {"type": "initialize", "id": "init-1", "skill_attestation_key": "ab" * 32},
        {"type": "inspect", "id": "help-1", "code": "host", "cursor": 4},
    ]
    worker.send_raw("".join(json.dumps(frame) + "\n" for frame in frames))
    assert worker.read()["type"] == "initialized"
    assert worker.read()["found"] is False
    response, _ = worker.execute("host is openai4s")
    assert response["stdout"] == "True\n"
