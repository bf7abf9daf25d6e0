"""An independent check of "one uid per kernel" across host processes: two
host processes (not two kernels of one host) that start sandboxed kernels
at the same moment never hand out the same host uid, the worker really
runs as the uid its status names, and once both hosts have shut down no
process runs as either uid. In both sandbox modes that sandbox (enforce and
the default)."""

import json
import os
import subprocess
import sys
import time

import pytest

from sandbox_support import TEST_LIMITS

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only a root host gives kernels uids")

# One host process: starts a kernel, says its identity and the uid the cell
# sees itself as, then holds the kernel until its stdin closes.
HOST = """
import json, sys
from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for
workspace, mode = sys.argv[1], sys.argv[2]
kernel = Kernel(cwd=workspace, sandbox=sandbox_for(workspace, mode=mode or None))
ran = kernel.execute("import os; print(os.getpid())")
print(json.dumps({"identity": kernel.sandbox_status["identity"],
                  "state": kernel.sandbox_status["state"], "ran": ran["stdout"]}), flush=True)
sys.stdin.readline()
kernel.shutdown()
"""


def _uids_of(pid):
    """The real, effective, saved and filesystem uids of a live process;
    None for a zombie (this machine's init may leave them unreaped) or a
    process gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
    except OSError:
        return None
    if fields.get("State", "").split()[:1] in (["Z"], ["X"]):
        return None
    return {int(field) for field in fields["Uid"].split()}


def _pids_running_as(uid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and uid in (_uids_of(entry) or ()):
            found.append(int(entry))
    return found


def _start_host(workspace, mode):
    env = dict(os.environ, **TEST_LIMITS)
    env.pop("OPENAI4S_SANDBOX_UID", None)
    return subprocess.Popen(
        [sys.executable, "-c", HOST, str(workspace), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize("mode", ["enforce", ""], ids=["enforce", "default"])
def test_two_host_processes_never_share_a_kernel_uid(mode, sandbox_unavailable_reason, tmp_path):
    if sandbox_unavailable_reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
    spaces = [tmp_path / "a", tmp_path / "b"]
    for space in spaces:
        space.mkdir()
    # Both hosts start before either has its kernel: their leases race.
    hosts = [_start_host(space, mode) for space in spaces]
    ran = set()
    try:
        said = []
        for host in hosts:
            line = host.stdout.readline()
            assert line, host.stderr.read()
            said.append(json.loads(line))
        uids = [s["identity"]["host_uid"] for s in said]
        assert all(s["state"] == "enabled" for s in said), said
        assert uids[0] != uids[1], said
        for s in said:
            assert s["identity"]["own_uid"] is True, s
            assert s["identity"]["host_gid"] == s["identity"]["host_uid"], s
        # Not only reported: each host's worker runs as its uid, and no
        # process of the other host does.
        for uid, host in zip(uids, hosts):
            running = _pids_running_as(uid)
            ran.update(running)
            assert running, f"no process runs as {uid}"
            other = hosts[1 - hosts.index(host)].pid
            assert all(_parent_chain_has(pid, host.pid) for pid in running), (
                uid,
                host.pid,
                other,
                [(pid, _describe(pid)) for pid in running],
            )
            assert not any(_parent_chain_has(pid, other) for pid in running)
    finally:
        for host in hosts:
            if host.poll() is None:
                host.stdin.close()
        for host in hosts:
            host.wait(timeout=60)

    # Released with nothing left behind: what ran as either uid is gone.
    # (Not "nothing runs as them": under pytest-xdist another test's kernel
    # may lease a released uid at once.)
    def left():
        return [pid for pid in ran if any(pid in _pids_running_as(uid) for uid in uids)]

    deadline = time.monotonic() + 10
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left(), [(pid, _describe(pid)) for pid in left()]


def _parent_chain_has(pid, ancestor):
    """Whether `ancestor` is `pid` or one of its ancestors."""
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            with open(f"/proc/{pid}/stat") as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            return False
    return False


def _describe(pid):
    """A process's parent and command line, for a failure message."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            parent = stat.read().rsplit(")", 1)[1].split()[1]
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return parent, cmdline.read().replace(b"\0", b" ")[:160].decode(errors="replace")
    except OSError:
        return None
