"""An attacker's pass over warm workers (issue 28): what a cell leaves
behind must not reach the worker a restart swaps in from the standby (files
in the sandbox's /tmp and /dev/shm, environment variables, processes that
left the session, background jobs), and a kernel claimed from a pool
cannot reach the workspace of another claimed kernel or of a pooled worker
still waiting for its claimant. With the sandbox enforced: with it off no
kernel is contained."""

import json
import os
import time

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.pool import KernelPool
from openai4s.kernel.sandbox_status import sandbox_for

from attack_support import pids_with_marker, wait_for

LEAVE = """
import os, subprocess
for path in ("/tmp/left.txt", "/dev/shm/left.txt", "/var/tmp/left.txt"):
    try:
        open(path, "w").write("left")
    except OSError:
        pass
os.environ["LEFT_BEHIND"] = "1"
subprocess.Popen(["setsid", "sleep", "{marker}"])
"""

FIND = """
import json, os
print(json.dumps({
    "files": [p for p in ("/tmp/left.txt", "/dev/shm/left.txt", "/var/tmp/left.txt")
              if os.path.exists(p)],
    "env": os.environ.get("LEFT_BEHIND"),
}))
"""


@pytest.mark.parametrize("standby", [False, True], ids=["restart", "standby-swap"])
def test_a_restart_leaves_nothing_of_the_old_worker(enforced, workspace, standby):
    marker = f"{time.time_ns() % 10**6 + 2000}.{os.getpid() % 1000}"
    kernel = Kernel(
        cwd=str(workspace), sandbox=sandbox_for(str(workspace), enforced), standby=standby
    )
    try:
        assert kernel.execute(LEAVE.format(marker=marker))["error"] is None
        wait_for(lambda: pids_with_marker(marker), "the escaped process")
        if standby:
            assert kernel._core.wait_standby()
        kernel.restart()
        wait_for(lambda: not pids_with_marker(marker), "the old worker's processes to end", 20)
        seen = json.loads(kernel.execute(FIND)["stdout"])
        assert seen == {"files": [], "env": None}, seen
    finally:
        kernel.shutdown()
        for pid in pids_with_marker(marker):
            os.kill(pid, 9)


def test_a_job_of_the_old_worker_ends_at_a_standby_swap(enforced, dispatcher, workspace):
    marker = f"{time.time_ns() % 10**6 + 3000}.{os.getpid() % 1000}"
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="exec_background",
        pattern="*",
        decision="allow",
    )
    kernel = Kernel(
        dispatcher=dispatcher,
        cwd=str(workspace),
        sandbox=sandbox_for(str(workspace), enforced),
        standby=True,
    )
    try:
        code = f"import subprocess, time\nsubprocess.Popen(['sleep', '{marker}'])\ntime.sleep(300)"
        out = kernel.execute(f"print(host.exec_background({code!r})['exec_id'])")
        exec_id = out["stdout"].strip()
        wait_for(lambda: pids_with_marker(marker), "the job's process")
        assert kernel._core.wait_standby()
        kernel.restart()
        wait_for(lambda: not pids_with_marker(marker), "the job's processes to end", 20)
        peek = kernel.execute(f"print(host.exec_peek({exec_id!r})['state'])")
        assert "no background job" in (peek["error"] or "") or peek["stdout"] == "stopped\n"
    finally:
        kernel.shutdown()
        for pid in pids_with_marker(marker):
            os.kill(pid, 9)


REACH = """
import json, os
reached = []
for other in {others!r}:
    for what, attempt in (
        ("list", lambda: os.listdir(other)),
        ("read", lambda: open(os.path.join(other, "secret.txt")).read()),
        ("write", lambda: open(os.path.join(other, "planted.py"), "w").write("x = 1")),
    ):
        try:
            attempt()
            reached.append(what + " " + other)
        except OSError:
            pass
try:
    siblings = os.listdir(os.path.dirname(os.getcwd()))
except OSError:
    siblings = []
print(json.dumps({{"reached": reached, "siblings": sorted(siblings)}}))
"""


def test_a_pooled_kernel_reaches_no_other_workspace(enforced, tmp_path):
    root = tmp_path / "pool"
    root.mkdir()
    pool = KernelPool(size=2, workspace_root=str(root), sandbox=enforced)
    claimed = []
    try:
        first = pool.claim()
        claimed.append(first)
        second = pool.claim()
        claimed.append(second)
        wait_for(lambda: pool.ready >= 1, "the pool to refill", 60)
        mine = os.path.realpath(first.cwd)
        (root / "decoy").mkdir()
        for directory in root.iterdir():
            (directory / "secret.txt").write_text("someone else's")
        others = sorted(str(d) for d in root.iterdir() if str(d) != mine)
        assert len(others) >= 3  # the other claimed one, a waiting one, the decoy
        out = first.execute(REACH.format(others=others))
        assert out["error"] is None, out
        seen = json.loads(out["stdout"])
        assert seen["reached"] == [], seen
        assert all(os.path.join(root, s) not in others for s in seen["siblings"]), seen
        assert not any((d / "planted.py").exists() for d in root.iterdir())
    finally:
        for kernel in claimed:
            kernel.shutdown()
        pool.close()
