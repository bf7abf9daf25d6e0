"""The openai4s kernel as a Slurm job, through jupyter_client's own
KernelManager and BlockingKernelClient on the one-node cluster of
scripts/slurm_local.sh: the cell runs in the job, state persists, interrupt
keeps the namespace, restart is a new job, shutdown removes the job and
every file, and an end Slurm imposes is a dead kernel with its reason."""

import json
import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager

from slurm_support import KERNEL_NAME, SlurmEnvironment, active_jobs, job_state, wait_for


class SlurmKernel:
    def __init__(self, env):
        self.env = env
        with env.applied():
            self.km = KernelManager(kernel_name=KERNEL_NAME)
            self.km.start_kernel(cwd=str(env.workspace))
            self.kc = self.km.client()
            self.kc.start_channels()
            self.kc.wait_for_ready(timeout=90)

    @property
    def job_id(self):
        return self.km.provisioner.job_id

    def run(self, code, timeout=60):
        """(reply content, stdout text)."""
        out = []

        def collect(msg):
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                out.append(msg["content"]["text"])

        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=collect)
        return reply["content"], "".join(out)

    def shutdown(self):
        self.kc.stop_channels()
        with self.env.applied():
            self.km.shutdown_kernel()


@pytest.fixture
def kernel(slurm_env):
    running = SlurmKernel(slurm_env)
    yield running
    if running.km.has_kernel:
        running.shutdown()


def test_cells_run_inside_the_job_and_keep_their_state(kernel):
    job = kernel.job_id
    assert job in active_jobs() and job_state(job) == "RUNNING"
    reply, out = kernel.run(
        "import os\nx = 41\nprint(os.environ['SLURM_JOB_ID'], os.environ['SLURM_JOB_NODELIST'])"
    )
    assert reply["status"] == "ok"
    assert out.split() == [job, socket.gethostname()]
    assert kernel.run("print(x + 1)")[1] == "42\n"


def test_the_key_stays_out_of_command_lines_and_the_job_environment(kernel, cluster):
    key = kernel.km.session.key.decode()
    assert key
    shown = subprocess.run(
        ["scontrol", "show", "job", "-dd", kernel.job_id], capture_output=True, text=True
    ).stdout
    script = subprocess.run(
        ["scontrol", "write", "batch_script", kernel.job_id, "-"], capture_output=True, text=True
    ).stdout
    assert "exec " in script and key not in script and key not in shown
    # slurmctld keeps each job's submitted environment in its state directory.
    state = Path(cluster).parent / "ctld"
    stored = [p for p in state.rglob("environment") if f"job.{kernel.job_id}" in str(p)]
    assert stored and all(key.encode() not in p.read_bytes() for p in stored)
    ready = kernel.km.provisioner.kernel_dir
    pid = json.loads(Path(ready, "ready.json").read_text())["pid"]
    assert key.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert key.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
    # The directory and every file in it are the user's alone.
    assert stat.S_IMODE(os.stat(ready).st_mode) == 0o700
    for name in ("launch.json", "connection.json", "ready.json"):
        assert stat.S_IMODE(os.stat(Path(ready, name)).st_mode) == 0o600, name


def test_interrupt_by_message_keeps_the_namespace(kernel):
    kernel.run("x = 'kept'")
    msg_id = kernel.kc.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(120)")
    msg = kernel.kc.get_iopub_msg(timeout=30)
    while not (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream"):
        msg = kernel.kc.get_iopub_msg(timeout=30)
    kernel.km.interrupt_kernel()
    reply = kernel.kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=30)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert kernel.run("print(x)")[1] == "kept\n"
    assert job_state(kernel.job_id) == "RUNNING"


def test_restart_is_a_new_job_and_the_old_one_ends(kernel):
    first = kernel.job_id
    kernel.run("x = 1")
    with kernel.env.applied():
        kernel.km.restart_kernel()
    kernel.kc.wait_for_ready(timeout=90)
    second = kernel.job_id
    assert second != first
    assert job_state(first) == "COMPLETED"
    reply, out = kernel.run("print('x' in dir(), __import__('os').environ['SLURM_JOB_ID'])")
    assert out.split() == ["False", second]
    assert len(kernel.env.leftovers()) == 1


def test_shutdown_ends_the_job_and_removes_every_file(kernel):
    job = kernel.job_id
    connection_file = kernel.km.connection_file
    kernel.shutdown()
    assert job not in active_jobs()
    assert job_state(job) == "COMPLETED"
    assert kernel.env.leftovers() == []
    assert not os.path.exists(connection_file)


def test_scancel_is_a_dead_kernel_with_the_reason(kernel):
    job = kernel.job_id
    subprocess.run(["scancel", job], check=True)
    wait_for(lambda: not kernel.km.is_alive(), 30, "the kernel is seen dead")
    reason = kernel.km.provisioner.exit_reason
    assert f"Slurm job {job}" in reason and "CANCELLED" in reason
    kernel.shutdown()
    assert kernel.env.leftovers() == []


def test_a_refused_submission_is_a_clear_error_and_leaves_nothing(cluster):
    env = SlurmEnvironment("--partition", "no-such-partition")
    try:
        with env.applied():
            km = KernelManager(kernel_name=KERNEL_NAME)
            with pytest.raises(Exception, match="sbatch failed: .*[Pp]artition"):
                km.start_kernel(cwd=str(env.workspace))
            km.cleanup_resources()
        assert env.leftovers() == []
    finally:
        env.cleanup()


def test_three_kernels_are_three_jobs(slurm_env):
    kernels = []
    try:
        for _ in range(3):
            kernels.append(SlurmKernel(slurm_env))
        jobs = {k.job_id for k in kernels}
        assert len(jobs) == 3 and jobs <= active_jobs()
        for index, k in enumerate(kernels):
            assert k.run(f"print({index} * 2)")[1] == f"{index * 2}\n"
    finally:
        for k in kernels:
            k.shutdown()
    assert not jobs & active_jobs()
    assert slurm_env.leftovers() == []
