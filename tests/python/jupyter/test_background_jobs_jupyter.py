"""host.exec_background through the Jupyter kernel (issue 30 point 4): the
C++ front door's hooks start the job, and shutting the kernel down leaves
none of the job's processes behind."""

import json
import os
import select
import time

import pytest

from jupyter_support import KernelEnvironment, kernel_missing_reason
from kernel_client import RunningKernel, stdout_of

RUNAWAY = (
    "import subprocess, time\n"
    "child = subprocess.Popen(['sleep', '300'])\n"
    "print('child', child.pid, flush=True)\n"
    "while True:\n"
    "    time.sleep(0.05)\n"
)


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def host(kernel, call):
    reply, outputs = kernel.execute(f"import json as _j\nprint(_j.dumps({call}))")
    assert reply["status"] == "ok", reply
    return json.loads(stdout_of(outputs))


def wait_for(condition, what, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def environment():
    reason = kernel_missing_reason()
    if reason:
        pytest.skip(reason)
    env = KernelEnvironment()
    yield env
    env.cleanup()


def test_a_job_runs_beside_the_notebook_and_ends_with_the_kernel(environment):
    kernel = RunningKernel(environment)
    fds = {}
    try:
        before = descendants(kernel.pid)
        # exec_background asks (the spec's default): the person answers at
        # the notebook's input prompt.
        msg_id = kernel.kc.execute(
            f"print(host.exec_background({RUNAWAY!r})['exec_id'])", allow_stdin=True
        )
        request = kernel.kc.get_stdin_msg(timeout=60)
        assert request["msg_type"] == "input_request"
        assert "exec_background" in request["content"]["prompt"]
        kernel.kc.input("y")
        reply, outputs = kernel.collect(msg_id)
        assert reply["status"] == "ok", reply
        exec_id = stdout_of(outputs).strip()
        wait_for(
            lambda: "child" in host(kernel, f"host.exec_peek({exec_id!r})")["output"],
            "the job's child process",
        )
        [listed] = host(kernel, "host.exec_list()")
        assert listed["exec_id"] == exec_id and listed["state"] == "running"
        for pid in descendants(kernel.pid) - before:
            try:
                fds[pid] = os.pidfd_open(pid)
            except ProcessLookupError:
                pass
        assert fds, "the job's worker is not below the kernel process"
    finally:
        kernel.shutdown()

    def gone():
        return all(
            select.select([fd], [], [], 0)[0] and not os.path.exists(f"/proc/{pid}")
            for pid, fd in fds.items()
        )

    try:
        wait_for(gone, "every process of the job to end", timeout=30)
    finally:
        for fd in fds.values():
            os.close(fd)
