"""With the sandbox off nothing a cell starts outlives its kernel: a process
that leaves the worker's session and process group (setsid, a double fork)
is still ended at shutdown, and when the worker itself was killed first.
The enforced sandbox gets the same from its PID namespace; these tests pin
the direct launcher's containment (docs/sandbox.md)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

from manager_support import pids_with_marker

# Leaves the worker's session twice over: `setsid` (which forks when it
# leads a group) and a double fork whose grandchild calls setsid() itself.
ESCAPE = textwrap.dedent(
    """
    import os, subprocess
    subprocess.Popen(["setsid", "sleep", "{marker}"])
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{marker}"])
        os._exit(0)
    os.wait()
    print("escaped")
    """
)


def new_marker():
    # A sleep duration no other test uses, so the probe finds only ours.
    return f"{time.time_ns() % 10**6 + 2000}.{os.getpid() % 1000}"


def wait_until(predicate, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def marker():
    value = new_marker()
    yield value
    for pid in pids_with_marker(value):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(cwd=str(tmp_path), sandbox=sandbox_for(str(tmp_path), mode="off"))
    yield k
    k.shutdown()


def escape(kernel, marker):
    result = kernel.execute(ESCAPE.format(marker=marker))
    assert result["error"] is None, result["error"]
    assert result["stdout"] == "escaped\n"
    wait_until(lambda: len(pids_with_marker(marker)) >= 2, "both escaped sleeps")


def test_escaped_processes_end_at_shutdown(kernel, marker):
    escape(kernel, marker)
    kernel.shutdown()
    wait_until(lambda: not pids_with_marker(marker), "every escaped process to end", 5)


def test_escaped_processes_end_when_the_worker_was_killed(kernel, marker):
    escape(kernel, marker)
    os.kill(kernel.pid, signal.SIGKILL)
    kernel.shutdown()
    wait_until(lambda: not pids_with_marker(marker), "every escaped process to end", 5)


def test_escaped_processes_end_at_restart(kernel, marker):
    escape(kernel, marker)
    kernel.restart()
    wait_until(lambda: not pids_with_marker(marker), "every escaped process to end", 5)
    assert kernel.execute("print(1 + 1)")["stdout"] == "2\n"


def test_a_cell_still_waits_for_its_own_children(kernel):
    # The worker adopts orphans now; its own children's exit codes must
    # still reach the code that started them.
    code = textwrap.dedent(
        """
        import subprocess
        print(subprocess.run(["sh", "-c", "sleep 0.2 & exit 3"]).returncode)
        print(subprocess.run(["sh", "-c", "exit 5"]).returncode)
        """
    )
    result = kernel.execute(code)
    assert result["error"] is None, result["error"]
    assert result["stdout"] == "3\n5\n"


def test_a_kernel_leaves_unrelated_processes_alone(kernel, marker):
    # Started by the host, not by a cell: not the kernel's to end.
    bystander = subprocess.Popen(["sleep", marker], start_new_session=True)
    try:
        assert kernel.execute("print('ok')")["stdout"] == "ok\n"
        kernel.shutdown()
        time.sleep(0.3)
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def host_makes_cgroups():
    """Root with a writable pids hierarchy (v1) or unified one (v2): where
    the direct launcher gives each worker a cgroup."""
    hierarchy = "/sys/fs/cgroup/pids"
    if not os.path.isdir(hierarchy):
        hierarchy = "/sys/fs/cgroup"
    return os.geteuid() == 0 and os.access(hierarchy, os.W_OK)


def test_a_scrubbed_escapee_of_a_killed_worker_ends_where_a_cgroup_holds_it(kernel, marker):
    # No mark and no tree to find it by: only the worker's own cgroup, which
    # a root host (or a delegated cgroup v2) gives each unsandboxed worker.
    if not host_makes_cgroups():
        pytest.skip("this host cannot make a cgroup per worker (not root)")
    code = ESCAPE.replace(
        '["setsid", "sleep", "{marker}"]', '["env", "-i", "setsid", "sleep", "{marker}"]'
    )
    result = kernel.execute(code.format(marker=marker))
    assert result["error"] is None, result["error"]
    wait_until(lambda: len(pids_with_marker(marker)) >= 2, "both escaped sleeps")
    os.kill(kernel.pid, signal.SIGKILL)
    kernel.shutdown()
    wait_until(lambda: not pids_with_marker(marker), "every escaped process to end", 5)


DYING_HOST = textwrap.dedent(
    """
    import sys
    from openai4s.kernel import Kernel
    from openai4s.kernel.sandbox_status import sandbox_for
    k = Kernel(cwd=sys.argv[1], sandbox=sandbox_for(sys.argv[1], mode="off"))
    print(k.pid, flush=True)
    print(k.execute(sys.argv[2])["stdout"], flush=True)
    sys.stdin.read()
    """
)


SCRUBBED_ESCAPE = ESCAPE.replace(
    '["setsid", "sleep", "{marker}"]', '["env", "-i", "setsid", "sleep", "{marker}"]'
)


def start_dying_host(tmp_path, marker):
    """A host process with one unsandboxed kernel whose cell escaped; returns
    it and its worker's pid."""
    host = subprocess.Popen(
        [sys.executable, "-c", DYING_HOST, str(tmp_path), SCRUBBED_ESCAPE.format(marker=marker)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    worker = int(host.stdout.readline())
    assert host.stdout.readline() == "escaped\n"
    wait_until(lambda: len(pids_with_marker(marker)) >= 2, "both escaped sleeps")
    return host, worker


def test_what_a_killed_host_left_ends_with_its_worker(tmp_path, marker):
    # The host is SIGKILLed with its kernel up: nothing shuts the worker
    # down, and no host walks its tree. The worker reads end of input and
    # ends what is below it before it leaves (no mark needed, no root).
    host, _ = start_dying_host(tmp_path, marker)
    host.kill()
    host.wait()
    wait_until(lambda: not pids_with_marker(marker), "every escaped process to end", 10)


def test_what_a_dead_host_left_ends_when_the_next_worker_starts(tmp_path, marker):
    # The host and its worker are SIGKILLed with the kernel up: nobody ends
    # anything. The next unsandboxed worker on this machine ends the leftovers.
    if not host_makes_cgroups():
        pytest.skip("this host cannot make a cgroup per worker (not root)")
    host, worker = start_dying_host(tmp_path, marker)
    try:
        os.kill(worker, signal.SIGKILL)
    finally:
        host.kill()
        host.wait()
    # Checked at once: any unsandboxed worker that starts now (another
    # test's, under pytest-xdist) ends them too, as this test wants.
    assert pids_with_marker(marker), "the escapees outlived their host (what this test ends)"
    Kernel(cwd=str(tmp_path), sandbox=sandbox_for(str(tmp_path), mode="off")).shutdown()
    wait_until(lambda: not pids_with_marker(marker), "every escaped process to end", 5)
