"""Each Slurm job's store lives on its node (SQLite's locking holds there,
not across hosts on a network filesystem), and its record reaches the
launcher's data dir, where `openai4s audit` reads every job's calls: after
a clean shutdown, after scancel, and, from the periodic copy, after a
SIGKILL that leaves the job no last word. Nothing stays on the node."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from slurm_support import SlurmEnvironment, job_state, wait_for
from test_slurm_kernel import SlurmKernel

#: A host call every kernel records: refused (no one to ask: unattended
#: ask is deny), but logged whatever the outcome.
_HOST_CALL = "try:\n    host.bash('echo recorded')\nexcept Exception as e:\n    print('refused')"


def host_call(kernel):
    out = []

    def collect(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])

    kernel.kc.execute_interactive(_HOST_CALL, allow_stdin=False, timeout=60, output_hook=collect)
    return "".join(out)


class RecordedEnvironment(SlurmEnvironment):
    """The kernelspec's provisioner keeps the node's live stores in node/
    (here, so a test sees and removes them) and copies each one every
    second."""

    def __init__(self):
        super().__init__()
        self.node = self.data_dir.parent / "node"
        self.node.mkdir()
        spec = self.prefix / "share/jupyter/kernels/openai4s-python-slurm/kernel.json"
        document = json.loads(spec.read_text())
        config = document["metadata"]["kernel_provisioner"].setdefault("config", {})
        config.update(node_data_base=str(self.node), record_interval=1.0)
        spec.write_text(json.dumps(document))

    def record(self, job):
        return self.data_dir / "slurm-jobs" / job / "openai4s.db"


@pytest.fixture
def recorded(cluster):
    env = RecordedEnvironment()
    yield env
    env.cleanup()


def audit(env, *args):
    done = subprocess.run(
        [sys.executable, "-m", "openai4s", "audit", "--data-dir", str(env.data_dir), "--json"]
        + list(args),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def bash_calls(env, *args):
    return [c for c in audit(env, *args) if c["tool"] == "bash" and "recorded" in c["what"]]


def live_store(kernel):
    ready = json.loads(Path(kernel.km.provisioner.kernel_dir, "ready.json").read_text())
    return Path(ready["node_data_dir"]) / "openai4s.db"


def test_the_store_is_node_local_and_audit_reads_it_after_shutdown(recorded):
    kernel = SlurmKernel(recorded)
    job = kernel.job_id
    assert host_call(kernel) == "refused\n"
    live = live_store(kernel)
    # The job's kernel writes its own store on the node, never the
    # launcher's data dir.
    assert live.is_file() and live.parent.parent == recorded.node
    assert not (recorded.data_dir / "openai4s.db").exists()
    kernel.shutdown()
    assert job_state(job) == "COMPLETED"
    [call] = bash_calls(recorded)
    assert call["where"] == f"slurm job {job}" and call["outcome"] != "exit 0"
    assert {c["where"] for c in audit(recorded, "--job", job)} == {f"slurm job {job}"}
    # One plain file a reader opens read-only (no write-ahead log beside it).
    record = recorded.record(job)
    assert sorted(p.name for p in record.parent.iterdir() if p.is_file()) == ["openai4s.db"]
    assert os.stat(record).st_mode & 0o077 == 0
    # The node's copy went once its record was taken.
    assert list(recorded.node.iterdir()) == []
    assert recorded.leftovers() == []


def test_scancel_still_leaves_the_record(recorded):
    kernel = SlurmKernel(recorded)
    job = kernel.job_id
    host_call(kernel)
    subprocess.run(["scancel", job], check=True)
    wait_for(lambda: not kernel.km.is_alive(), 30, "the kernel is seen dead")
    wait_for(lambda: not list(recorded.node.iterdir()), 30, "the job's last copy")
    # Slurm's SIGTERM reached the kernel and the launcher on the node,
    # which took the last copy before the job ended.
    assert [c["where"] for c in bash_calls(recorded)] == [f"slurm job {job}"]
    assert not (recorded.data_dir / "openai4s.db").exists()
    kernel.shutdown()
    assert recorded.leftovers() == []


def test_a_job_killed_outright_leaves_its_last_periodic_copy(recorded):
    kernel = SlurmKernel(recorded)
    job = kernel.job_id
    host_call(kernel)
    # The periodic copy reaches the login node while the kernel runs.
    wait_for(lambda: recorded.record(job).exists() and bash_calls(recorded), 30, "a copy")
    # SIGKILL to every process of the job: no one can take a last copy.
    subprocess.run(["scancel", "--full", "--signal=KILL", job], check=True)
    wait_for(lambda: not kernel.km.is_alive(), 30, "the kernel is seen dead")
    assert len(bash_calls(recorded, "--job", job)) == 1
    with sqlite3.connect(f"file:{recorded.record(job)}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    kernel.shutdown()
    # The node's live store is all that is left of the job; a real node's
    # TMPDIR is the job's own and goes with it.
    for leftover in recorded.node.iterdir():
        subprocess.run(["rm", "-rf", str(leftover)], check=True)
    assert recorded.leftovers() == []
