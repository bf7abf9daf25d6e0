"""host.exec_background / exec_peek / exec_interrupt / exec_list (issue 30
point 4): a job runs in a worker of its own, beside the interactive one,
through a real kernel, a real dispatcher and SQLite store, with the sandbox
off and enforced."""

import json
import os
import select
import textwrap
import time

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

TICKS = textwrap.dedent(
    """
    import time
    for i in range(50):
        print("tick", i, flush=True)
        time.sleep(0.2)
    """
)
# A job that never ends on its own, with a child process of its own.
RUNAWAY = textwrap.dedent(
    """
    import subprocess, time
    child = subprocess.Popen(["sleep", "300"])
    print("child", child.pid, flush=True)
    while True:
        time.sleep(0.05)
    """
)


def allow_background(dispatcher):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="exec_background",
        pattern="*",
        decision="allow",
    )


@pytest.fixture
def kernel(dispatcher, workspace, sandbox_mode):
    allow_background(dispatcher)
    k = Kernel(
        dispatcher=dispatcher,
        cwd=str(workspace),
        sandbox=sandbox_for(str(workspace), mode=sandbox_mode),
    )
    yield k
    k.shutdown()


def host(kernel, call):
    """A host call made by a cell of `kernel`, its result decoded."""
    response = kernel.execute(f"import json as _j\nprint(_j.dumps({call}))")
    assert response["error"] is None, response["error"]
    return json.loads(response["stdout"])


def start(kernel, code):
    started = host(kernel, f"host.exec_background({code!r})")
    assert started["state"] == "starting"
    return started["exec_id"]


def peek(kernel, exec_id):
    return host(kernel, f"host.exec_peek({exec_id!r})")


def wait_for(condition, what, timeout=90):
    """Polls `condition` until it returns something truthy (a wait, not a
    measurement: the bound only keeps a broken run from hanging)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def wait_state(kernel, exec_id, *states):
    return wait_for(
        lambda: (job := peek(kernel, exec_id))["state"] in states and job,
        f"job {exec_id} to reach {states}",
    )


def descendants(root):
    """Every live process below `root`, from procfs."""
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


def pin(pids):
    """pidfds of `pids` (those still alive), so a recycled pid cannot fool
    the check that they ended."""
    fds = {}
    for pid in pids:
        try:
            fds[pid] = os.pidfd_open(pid)
        except ProcessLookupError:
            pass
    return fds


def all_gone(fds):
    """True once every pinned process has exited and been reaped."""
    for pid, fd in fds.items():
        readable, _, _ = select.select([fd], [], [], 0)
        if not readable or os.path.exists(f"/proc/{pid}"):
            return False
    return True


def job_processes(kernel, exec_id, before):
    """The processes the job added below this test process, pinned."""
    wait_for(lambda: "child" in peek(kernel, exec_id)["output"], "the job's child process")
    fds = pin(descendants(os.getpid()) - before)
    assert fds, "the job's worker is not below the host process"
    return fds


def test_a_job_prints_while_it_runs_and_is_interrupted(kernel):
    kernel.execute("kept = 'interactive'")
    exec_id = start(kernel, TICKS)
    first = wait_for(
        lambda: (job := peek(kernel, exec_id))["output"].count("tick") >= 2 and job,
        "the job's first ticks",
    )
    assert first["state"] == "running"
    wait_for(
        lambda: peek(kernel, exec_id)["output_bytes"] > first["output_bytes"],
        "the job's output to grow",
    )
    # The interactive kernel answers while the job runs.
    assert kernel.execute("print(kept)")["stdout"] == "interactive\n"

    delivered = host(kernel, f"host.exec_interrupt({exec_id!r})")
    assert delivered["delivered"] is True
    ended = wait_state(kernel, exec_id, "interrupted", "done", "error", "crashed")
    assert ended["state"] == "interrupted"
    assert "KeyboardInterrupt" in (ended["error"] or "") or ended["error"] == "Interrupted"
    assert "tick 49" not in ended["output"]

    [listed] = host(kernel, "host.exec_list()")
    assert listed["exec_id"] == exec_id and listed["state"] == "interrupted"
    assert listed["started_at"].endswith("Z") and listed["ended_at"]
    assert listed["wall_s"] > 0 and listed["cpu_s"] >= 0 and listed["peak_rss_bytes"] > 0
    assert "output" not in listed
    assert kernel.execute("print(kept)")["stdout"] == "interactive\n"


def test_a_job_that_crashes_says_so_and_the_kernel_is_untouched(kernel):
    kernel.execute("kept = 7")
    crashed = start(kernel, "print('before', flush=True)\nimport os\nos._exit(3)")
    raised = start(kernel, "raise ValueError('boom in the background')")
    crash = wait_state(kernel, crashed, "crashed", "done", "error")
    assert crash["state"] == "crashed", crash
    assert crash["error"]
    failure = wait_state(kernel, raised, "error", "done", "crashed")
    assert failure["state"] == "error"
    assert "boom in the background" in failure["error"]
    assert kernel.execute("print(kept)")["stdout"] == "7\n"
    assert kernel.is_alive()


def test_a_job_left_running_at_shutdown_leaves_no_process(dispatcher, workspace, sandbox_mode):
    allow_background(dispatcher)
    k = Kernel(
        dispatcher=dispatcher, cwd=str(workspace), sandbox=sandbox_for(str(workspace), sandbox_mode)
    )
    try:
        before = descendants(os.getpid())
        exec_id = start(k, RUNAWAY)
        fds = job_processes(k, exec_id, before)
    finally:
        k.shutdown()
    try:
        # shutdown() returns once the job's worker is reaped; the sandbox's
        # inner processes end with its PID namespace.
        wait_for(lambda: all_gone(fds), "every process of the job to end", timeout=20)
    finally:
        for fd in fds.values():
            os.close(fd)


def test_a_restart_stops_the_jobs_of_the_old_worker(kernel):
    before = descendants(os.getpid())
    exec_id = start(kernel, RUNAWAY)
    fds = job_processes(kernel, exec_id, before)
    try:
        kernel.restart()
        wait_for(lambda: all_gone(fds), "every process of the job to end", timeout=20)
    finally:
        for fd in fds.values():
            os.close(fd)
    assert peek(kernel, exec_id)["state"] == "stopped"
    # The new worker may start jobs of its own.
    again = start(kernel, "print('again')")
    assert wait_state(kernel, again, "done", "error", "crashed")["output"] == "again\n"


def test_an_unattended_start_without_an_allow_rule_is_refused(dispatcher, workspace):
    k = Kernel(dispatcher=dispatcher, cwd=str(workspace))
    try:
        response = k.execute("host.exec_background('print(1)')")
        assert "Permission denied" in response["error"]
        assert host(k, "host.exec_list()") == []
    finally:
        k.shutdown()
    rows = dispatcher.store._conn.execute(
        "SELECT ok, decided_by FROM host_call_log WHERE method = 'exec_background'"
    ).fetchall()
    assert [row[0] for row in rows] == [0]


def test_a_started_job_is_on_the_audit_record(kernel, dispatcher):
    exec_id = start(kernel, "print('audited')")
    wait_state(kernel, exec_id, "done")
    rows = dispatcher.store._conn.execute(
        "SELECT ok, args_preview, result_preview FROM host_call_log WHERE method = 'exec_background'"
    ).fetchall()
    assert len(rows) == 1 and rows[0][0] == 1
    assert "audited" in rows[0][1] and "exec_id" in rows[0][2]


def test_bad_calls_get_clear_errors_and_leave_the_kernel_usable(kernel):
    assert "unknown" not in kernel.execute("x = 1")["stdout"]
    missing = kernel.execute("host.exec_peek('bg_nope')")["error"]
    assert "no background job 'bg_nope'" in missing
    assert "'code' must be a string" in kernel.execute("host.exec_background(42)")["error"]
    assert "exec_id" in kernel.execute("host.exec_interrupt(None)")["error"]
    assert kernel.execute("print(x)")["stdout"] == "1\n"


def test_a_job_printing_3_mb_keeps_its_output_bounded_and_its_tail_current(kernel):
    # Numbered 1 KiB lines, three times the worker's per-cell bound on what
    # a cell's response holds (spec kernel.md §3.11): a job's stream is not
    # cut there, so the window's tail ends with the job's last line.
    exec_id = start(
        kernel,
        "import sys\n"
        "for i in range(3072):\n    sys.stdout.write(f'{i:06d} ' + 'y' * 1016 + '\\n')\n",
    )
    job = wait_state(kernel, exec_id, "done", "error", "crashed")
    assert job["state"] == "done", job
    assert len(job["output"]) < 300_000
    assert job["output"].startswith("000000 " + "y" * 1016 + "\n")
    assert job["output"].endswith("003071 " + "y" * 1016 + "\n")
    assert "bytes of output dropped" in job["output"]
    # Every byte was seen; all but the 64 KiB head and 192 KiB tail dropped.
    assert job["output_bytes"] == 3072 * 1024
    assert job["dropped_bytes"] == 3072 * 1024 - 256 * 1024


def _last_line_number(output):
    return int(output.rstrip("\n").rsplit("\n", 1)[-1].split()[0])


def test_the_tail_of_a_job_that_prints_forever_keeps_moving(kernel):
    exec_id = start(
        kernel,
        "import itertools, sys, time\n"
        "for i in itertools.count():\n"
        "    sys.stdout.write(f'{i} ' + 'z' * 2000 + '\\n')\n"
        "    if i % 500 == 0:\n        time.sleep(0.01)\n",
    )
    # Well past the million characters a cell's response holds.
    first = wait_for(
        lambda: (job := peek(kernel, exec_id))["output_bytes"] > 2_500_000 and job,
        "the job to print 2.5 MB",
    )
    seen = _last_line_number(first["output"])
    assert seen * 2000 > 1_000_000
    later = wait_for(
        lambda: (job := peek(kernel, exec_id))["output_bytes"] > first["output_bytes"] + 1_000_000
        and job,
        "the job to print 1 MB more",
    )
    assert _last_line_number(later["output"]) > seen
    # What the host holds stays the window, however long the job runs.
    assert len(later["output"]) < 300_000
    host(kernel, f"host.exec_interrupt({exec_id!r})")
    assert wait_state(kernel, exec_id, "interrupted")["state"] == "interrupted"


def test_a_stock_dispatcher_reached_through_python_starts_jobs_too(dispatcher, workspace):
    # An instance-level authorize sends every host call through the Python
    # dispatcher (host_dispatch._stock): the kernel's jobs must still be
    # reachable there.
    from openai4s.host_dispatch import _native_route

    service = dispatcher._bash_authorization
    service.authorize = service.authorize
    allow_background(dispatcher)
    k = Kernel(dispatcher=dispatcher, cwd=str(workspace))
    try:
        assert _native_route(k) is None
        exec_id = start(k, "print('through python')")
        assert wait_state(k, exec_id, "done", "error", "crashed")["output"] == "through python\n"
    finally:
        k.shutdown()


def test_a_jobs_host_calls_reach_the_dispatcher_but_cannot_start_jobs(kernel):
    code = textwrap.dedent(
        """
        print(host.capabilities()["host_capability_version"])
        try:
            host.exec_background("print(1)")
        except RuntimeError as exc:
            print(exc)
        """
    )
    job = wait_state(kernel, start(kernel, code), "done", "error", "crashed")
    assert job["state"] == "done", job
    version, refused = job["output"].splitlines()
    assert version == "2"
    assert "a background job cannot start another" in refused
