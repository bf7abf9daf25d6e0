"""An independent check that no Jupyter request waits forever on a silent
worker: the real openai4s-jupyter-kernel, driven by jupyter_client, runs a
worker that answers cells but falls silent at its first completion request.
The complete_request is answered within the idle bound (30 s), the client is
told on stderr why, and the next cell runs on a fresh worker.

This file is also the fake worker: run as a script, it speaks the worker
protocol (as the R worker does: no handshake) and records its pid in the
directory it is given for each cell it runs."""

import json
import os
import sys
import time
from pathlib import Path


def _fake_worker(pid_directory):
    """Answers cells and fences until a `complete` arrives; then reads on and
    answers nothing, as a worker that ignores a request type would."""
    silent = False

    def send(frame):
        sys.stdout.write(json.dumps(frame) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        frame = json.loads(line)
        kind = frame.get("type", "execute")
        if kind == "shutdown":
            break
        if kind == "complete":
            silent = True
        if silent:
            continue
        if kind == "execute":
            with open(Path(pid_directory, "executed"), "a") as executed:
                executed.write(f"{os.getpid()}\n")
            send(
                {
                    "type": "response",
                    "id": frame["id"],
                    "stdout": "",
                    "stderr": "",
                    "error": None,
                    "interrupted": False,
                    "trace": {"error_lineno": None, "error_call": None},
                    "guards": {},
                    "files_read": [],
                    "usage": {"wall_s": 0.0, "cpu_s": 0.0, "peak_rss_kb": 1},
                }
            )
        elif kind == "stdout_request":
            send({"type": "stdout_text", "id": frame["id"], "text": "", "error": "none kept"})


if __name__ == "__main__":
    _fake_worker(sys.argv[1])
    sys.exit(0)


import pytest  # noqa: E402

from jupyter_support import KernelEnvironment, kernel_missing_reason  # noqa: E402
from kernel_client import RunningKernel  # noqa: E402

IDLE_BOUND_S = 30  # kDefaultIdleReplyTimeoutS


@pytest.fixture
def silent_kernel(tmp_path):
    reason = kernel_missing_reason()
    if reason:
        pytest.skip(reason)
    pids = tmp_path / "worker-pids"
    pids.mkdir()
    environment = KernelEnvironment(sandbox_mode="off", lang="r")
    spec = json.loads(environment.spec_file.read_text())
    argv = spec["argv"]
    argv[argv.index("--worker-argv") + 1] = json.dumps(
        [sys.executable, str(Path(__file__).resolve()), str(pids)]
    )
    environment.spec_file.write_text(json.dumps(spec))
    kernel = RunningKernel(environment)
    yield kernel, pids
    kernel.shutdown()
    environment.cleanup()


def _ran_on(pids):
    """The pid of the worker that ran each cell so far, in order."""
    return [int(line) for line in (pids / "executed").read_text().split()]


def test_a_worker_silent_on_completion_cannot_freeze_the_kernel(silent_kernel):
    kernel, pids = silent_kernel
    reply, _ = kernel.execute("x <- 1", timeout=60)
    assert reply["status"] == "ok", reply
    silent = _ran_on(pids)[-1]

    started = time.monotonic()
    msg_id = kernel.kc.complete("pas", 3)
    reply = kernel.kc.get_shell_msg(timeout=IDLE_BOUND_S + 30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=IDLE_BOUND_S + 30)
    waited = time.monotonic() - started
    # One reply, empty, after the bound (not before: the bound is what ended it).
    assert reply["content"]["status"] == "ok", reply["content"]
    assert reply["content"]["matches"] == []
    assert waited >= IDLE_BOUND_S - 1, waited
    said = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not said:
        msg = kernel.kc.get_iopub_msg(timeout=10)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
            said.append(msg["content"])
    assert said and said[0]["name"] == "stderr", said
    assert "did not answer the complete request" in said[0]["text"], said
    assert "a fresh worker starts with the next cell" in said[0]["text"], said

    # The kernel serves on, with a worker that is not the silent one.
    reply, _ = kernel.execute("y <- 2", timeout=60)
    assert reply["status"] == "ok", reply
    assert _ran_on(pids)[-1] != silent, "the next cell ran on the silent worker"
    assert _zombie(silent), f"the silent worker {silent} was left running"


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True
