"""No idle request waits forever: a worker that leaves one unanswered is
stopped at the bound and the caller is told so (KernelUnresponsiveError),
through the public Kernel API and a real worker process."""

import threading

import pytest

from openai4s.kernel import Kernel, KernelUnresponsiveError
from openai4s.kernel import manager as manager_module

from manager_support import fake_worker_factory

REQUESTS = {
    "complete": lambda k: k.complete("pri", 3),
    "inspect": lambda k: k.inspect("print", 5),
    "inspect_variables": lambda k: k.inspect_variables(),
}


def _call_with_a_ceiling(fn, ceiling=60):
    """fn() on a thread; a hang fails the test instead of freezing the run."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(ceiling)
    assert not thread.is_alive(), "the request never returned"
    return box


@pytest.mark.parametrize("request_type", sorted(REQUESTS))
def test_a_silent_worker_is_stopped_and_the_caller_told(request_type, monkeypatch):
    monkeypatch.setattr(manager_module, "_IDLE_REPLY_TIMEOUT_S", 0.5)
    factory = fake_worker_factory("deaf.py", request_type)
    with Kernel(transport_factory=factory) as k:
        assert k.execute("x")["stdout"] == "ran\n"
        box = _call_with_a_ceiling(lambda: REQUESTS[request_type](k))
        error = box.get("error")
        assert isinstance(error, KernelUnresponsiveError), box
        assert "did not answer" in str(error) and "0.5s" in str(error)
        assert "restart()" in str(error)
        assert not k.is_alive(), "the silent worker was stopped"


def test_a_worker_that_answers_keeps_running(monkeypatch):
    monkeypatch.setattr(manager_module, "_IDLE_REPLY_TIMEOUT_S", 0.5)
    with Kernel(transport_factory=fake_worker_factory("deaf.py")) as k:
        assert k.complete("pri", 3)["matches"] == ["print"]
        assert k.is_alive()
        assert k.execute("x")["stdout"] == "ran\n"
