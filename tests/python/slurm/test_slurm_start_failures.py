"""A start that cannot succeed is a clear error, never a hang, and leaves
no job and no file: a job that stays pending past `start_timeout` is
cancelled with Slurm's pending reason; a job that ends before its kernel
reports (a kernel that cannot be run) says how it ended."""

import json
import re

import pytest
from jupyter_client.manager import KernelManager

from slurm_support import KERNEL_NAME, SlurmEnvironment, active_jobs


def _edited_env(edit):
    env = SlurmEnvironment()
    spec_path = env.prefix / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json"
    spec = json.loads(spec_path.read_text())
    edit(spec)
    spec_path.write_text(json.dumps(spec))
    return env


def _failed_start(env, match):
    with env.applied():
        km = KernelManager(kernel_name=KERNEL_NAME)
        with pytest.raises(RuntimeError, match=match) as raised:
            km.start_kernel(cwd=str(env.workspace))
        km.cleanup_resources()
    km.failure = str(raised.value)
    return km


def test_a_job_that_stays_pending_is_cancelled_with_the_reason(cluster):
    def later(spec):
        config = spec["metadata"]["kernel_provisioner"]["config"]
        config["sbatch_args"] = ["--begin=now+1hour"]
        config["start_timeout"] = 3

    env = _edited_env(later)
    try:
        km = _failed_start(
            env,
            r"Slurm job \d+ did not start its kernel in 3 s \(state PENDING, reason BeginTime\)",
        )
        # Its own job is gone (other tests' jobs may come and go meanwhile).
        job = re.search(r"Slurm job (\d+)", km.failure).group(1)
        assert job not in active_jobs()
        assert env.leftovers() == []
    finally:
        env.cleanup()


def test_a_kernel_that_cannot_run_ends_the_start_with_how_the_job_ended(cluster):
    def broken(spec):
        spec["argv"][0] = "/nonexistent/openai4s-jupyter-kernel"

    env = _edited_env(broken)
    try:
        km = _failed_start(env, r"ended before it started: Slurm job \d+ on \S+ ended: FAILED")
        assert "exit code 127" in km.provisioner.exit_reason
        assert env.leftovers() == []
    finally:
        env.cleanup()
