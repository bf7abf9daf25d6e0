"""The worker runtime's end of containment (runtime/descendants.py): a
subreaper that calls end_all() on its way out leaves nothing of what it
started, a setsid'd double fork included, and nothing it did not start."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

# The manager tests' probe: live (not zombie) processes by command line.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "manager"))
from manager_support import pids_with_marker  # noqa: E402

# A stand-in for a worker with the sandbox off: made a subreaper (as the
# direct launcher does), it orphans two sleeps into sessions of their own.
SCRIPT = textwrap.dedent(
    """
    import ctypes, os, subprocess, sys
    from openai4s.kernel.runtime import descendants
    PR_SET_CHILD_SUBREAPER = 36
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    # Their stdio is not the test's pipes, which they would hold open.
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["sh", "-c", "setsid sleep {marker} &"], **quiet)
    if os.fork() == 0:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{marker}"])
        os._exit(0)
    os.wait()
    print(sorted(p for p, _ in descendants.live_descendants()), flush=True)
    if sys.argv[1] == "end":
        print(descendants.end_all(), flush=True)
    """
)


def run(marker, how):
    return subprocess.run(
        [sys.executable, "-c", SCRIPT.format(marker=marker), how],
        capture_output=True,
        text=True,
        timeout=60,
    )


def settle(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


def test_end_all_leaves_nothing_the_worker_started():
    marker = f"{time.time_ns() % 10**6 + 3000}.{os.getpid() % 1000}"
    bystander = subprocess.Popen(["sleep", marker], start_new_session=True)
    try:
        done = run(marker, "end")
        assert done.returncode == 0, done.stderr
        listed, signalled = done.stdout.splitlines()
        assert len(eval(listed)) == 2  # both orphans stayed below the subreaper
        assert int(signalled) == 2
        assert settle(lambda: pids_with_marker(marker) == [bystander.pid])
    finally:
        bystander.kill()
        bystander.wait()
        for pid in pids_with_marker(marker):
            os.kill(pid, signal.SIGKILL)


def test_without_it_the_orphans_outlive_the_worker():
    # Why the worker's exit path needs it: a subreaper's orphans go up to
    # init when it exits.
    marker = f"{time.time_ns() % 10**6 + 3000}.{os.getpid() % 1000 + 1}"
    try:
        done = run(marker, "keep")
        assert done.returncode == 0, done.stderr
        time.sleep(0.3)
        assert len(pids_with_marker(marker)) == 2
    finally:
        for pid in pids_with_marker(marker):
            os.kill(pid, signal.SIGKILL)
