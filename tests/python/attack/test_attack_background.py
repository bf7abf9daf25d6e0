"""An attacker's pass over host.exec_background (issue 30 point 4): a job
that leaves its worker's session and process group, jobs past the limit, a
job that fills memory or the disk under the kernel's limits, and one
kernel reaching for another kernel's job by its id."""

import json
import os
import textwrap
import time

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

from attack_support import pids_with_marker, wait_for

SMALL_LIMITS = {
    "OPENAI4S_KERNEL_MEMORY_LIMIT": "512M",
    "OPENAI4S_KERNEL_PROCESS_LIMIT": "64",
    "OPENAI4S_KERNEL_FILE_SIZE_LIMIT": "16M",
}


def allow_background(dispatcher):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="exec_background",
        pattern="*",
        decision="allow",
    )


def start_kernel(dispatcher, workspace, mode):
    return Kernel(
        dispatcher=dispatcher, cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode=mode)
    )


@pytest.fixture
def kernel(dispatcher, workspace, sandbox_mode, monkeypatch):
    for name, value in SMALL_LIMITS.items():
        monkeypatch.setenv(name, value)
    allow_background(dispatcher)
    k = start_kernel(dispatcher, workspace, sandbox_mode)
    yield k
    k.shutdown()


def host(kernel, call):
    response = kernel.execute(f"import json as _j\nprint(_j.dumps({call}))")
    assert response["error"] is None, response["error"]
    return json.loads(response["stdout"])


def start(kernel, code):
    started = host(kernel, f"host.exec_background({code!r})")
    assert started.get("state") == "starting", started
    return started["exec_id"]


def wait_state(kernel, exec_id, *states):
    return wait_for(
        lambda: (job := host(kernel, f"host.exec_peek({exec_id!r})"))["state"] in states and job,
        f"job {exec_id} to reach {states}",
        timeout=90,
    )


# Leaves the worker's session and process group twice over: `setsid` and a
# double fork whose grandchild calls setsid() itself.
ESCAPE = textwrap.dedent(
    """
    import os, subprocess, time
    subprocess.Popen(["setsid", "sleep", "{marker}"])
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{marker}"])
        os._exit(0)
    print("escaped", flush=True)
    while True:
        time.sleep(0.1)
    """
)


@pytest.mark.parametrize("mode", ["off", "enforce"])
def test_a_job_that_leaves_its_session_leaves_no_process_at_shutdown(
    dispatcher, workspace, mode, sandbox_unavailable_reason
):
    if mode == "enforce" and sandbox_unavailable_reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
    sandbox_mode = mode
    marker = f"{time.time_ns() % 10**6 + 1000}.{os.getpid() % 1000}"
    allow_background(dispatcher)
    k = start_kernel(dispatcher, workspace, sandbox_mode)
    try:
        exec_id = start(k, ESCAPE.format(marker=marker))
        wait_for(lambda: "escaped" in host(k, f"host.exec_peek({exec_id!r})")["output"], "escape")
        wait_for(lambda: len(pids_with_marker(marker)) >= 2, "the escaped processes")
    finally:
        k.shutdown()
    try:
        wait_for(lambda: not pids_with_marker(marker), "every escaped process to end", 5)
    finally:
        for pid in pids_with_marker(marker):
            os.kill(pid, 9)


def test_no_more_than_four_jobs_run_at_once(kernel):
    sleepers = [
        start(kernel, "import time\nprint('up', flush=True)\ntime.sleep(300)") for _ in range(4)
    ]
    refused = kernel.execute("host.exec_background('print(1)')")["error"] or ""
    assert "already runs 4 background jobs" in refused, refused
    # At once: an interrupt that lands before the job's code starts stops it
    # too (kernel/cell_interrupts.h).
    host(kernel, f"host.exec_interrupt({sleepers[0]!r})")
    wait_state(kernel, sleepers[0], "interrupted", "stopped", "crashed")
    again = start(kernel, "print('room again')")
    assert wait_state(kernel, again, "done", "error", "crashed")["output"] == "room again\n"


LIMITS = (
    "import resource\n"
    "print([resource.getrlimit(getattr(resource, 'RLIMIT_' + name))"
    " for name in ('AS', 'FSIZE', 'NPROC', 'CPU')])"
)


def test_a_job_runs_under_the_kernels_own_limits(kernel):
    own = kernel.execute(LIMITS)["stdout"]
    job = wait_state(kernel, start(kernel, LIMITS), "done", "error", "crashed")
    assert job["output"] == own, (job, own)


def test_a_job_that_fills_memory_or_the_disk_is_stopped_by_them(kernel, sandbox_mode, workspace):
    if sandbox_mode == "off":
        pytest.skip("with the sandbox off a kernel has no memory or file-size limit to meet")
    hog = start(kernel, "block = bytearray(2 << 30)\nprint('allocated', len(block))")
    job = wait_state(kernel, hog, "done", "error", "crashed")
    assert job["state"] in ("error", "crashed") and "allocated" not in job["output"], job
    filler = start(
        kernel,
        "chunk = b'x' * (1 << 20)\nwith open('fill.bin', 'wb') as f:\n"
        "    for _ in range(64):\n        f.write(chunk)\n        f.flush()\nprint('filled')",
    )
    job = wait_state(kernel, filler, "done", "error", "crashed")
    assert job["state"] in ("error", "crashed") and "filled" not in job["output"], job
    assert (workspace / "fill.bin").stat().st_size <= 16 << 20
    assert kernel.execute("print('still here')")["stdout"] == "still here\n"


def test_another_kernel_cannot_reach_a_job_by_its_id(kernel, dispatcher, workspace):
    exec_id = start(kernel, "import time\nprint('mine', flush=True)\ntime.sleep(300)")
    wait_state(kernel, exec_id, "running")
    other = Kernel(dispatcher=dispatcher, cwd=str(workspace))
    try:
        for method in ("exec_peek", "exec_interrupt"):
            out = other.execute(f"host.{method}({exec_id!r})")
            assert f"no background job '{exec_id}'" in (out["error"] or ""), out
        assert host(other, "host.exec_list()") == []
    finally:
        other.shutdown()
    assert host(kernel, f"host.exec_peek({exec_id!r})")["state"] == "running"
