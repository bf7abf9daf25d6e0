"""A new worker with nothing asked of it prepares what every first Cell
needs (the host facade, the provenance hooks), so a Jupyter client's first
cell, sent after its 0.2 s iopub flush, starts warm; a request that is
already waiting is served first instead."""

import time


def _host_is_known(worker):
    # Code help reads the namespace without running a Cell, so it sees what
    # is there before any Cell ran.
    worker.send({"type": "inspect", "id": "help-1", "code": "host", "cursor": 4})
    return worker.read()["found"]


def test_an_idle_new_worker_has_the_host_facade_before_its_first_cell(spawn):
    worker = spawn()
    time.sleep(0.5)  # idle: no request was waiting when the handshake ended
    assert _host_is_known(worker) is True
    response, _ = worker.execute("host is openai4s")
    assert response["error"] is None
    assert response["stdout"] == "True\n"


def test_a_request_waiting_at_the_handshake_is_served_before_any_preparation(spawn):
    worker = spawn(handshake=False)
    # The code-help request is queued behind the initialize frame, so it is
    # waiting when the handshake ends: it is answered from the bare namespace.
    worker.send({"type": "initialize", "id": "init-1", "skill_attestation_key": "ab" * 32})
    worker.send({"type": "inspect", "id": "help-1", "code": "host", "cursor": 4})
    assert worker.read()["type"] == "initialized"
    assert worker.read()["found"] is False
    response, _ = worker.execute("host is openai4s")
    assert response["stdout"] == "True\n"
