"""nbclient runs a notebook on the `openai4s-python-slurm` kernelspec: the
cells run inside a Slurm job, a plot arrives as PNG, and the job is gone
when the notebook is done; a time limit ends the kernel as a dead kernel
whose reason the provisioner gives."""

import subprocess
import threading
import time

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError

from slurm_support import KERNEL_NAME, SlurmEnvironment, active_jobs, job_state


def _notebook(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": "openai4s",
        "language": "python",
    }
    return nb


def _client(env, nb, timeout=120, **kwargs):
    return NotebookClient(
        nb,
        kernel_name=KERNEL_NAME,
        timeout=timeout,
        startup_timeout=90,
        resources={"metadata": {"path": str(env.workspace)}},
        **kwargs,
    )


def _stdout(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


def test_a_notebook_runs_in_a_job_with_a_png_plot(slurm_env):
    nb = _notebook(
        "import os\njob = os.environ['SLURM_JOB_ID']\nprint(job)",
        "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.show()",
        "print(job)",
    )
    with slurm_env.applied():
        _client(slurm_env, nb).execute()
    job = _stdout(nb.cells[0]).strip()
    assert job.isdigit() and _stdout(nb.cells[2]).strip() == job
    assert any("image/png" in o.get("data", {}) for o in nb.cells[1].outputs), nb.cells[1].outputs
    assert job not in active_jobs() and job_state(job) == "COMPLETED"
    assert slurm_env.leftovers() == []


def _end_time_now_once_running(km, stop):
    """Moves the job's end to now once it runs: the time limit is then
    over and slurmctld ends the job on its next pass (within 30 s), where
    the one-minute --time limit would cost a minute and more."""
    while not stop.wait(0.2):
        job = getattr(km.provisioner, "job_id", None)
        if not job or job_state(job) != "RUNNING":
            continue
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        done = subprocess.run(["scontrol", "update", f"JobId={job}", f"EndTime={now}"])
        if done.returncode == 0:
            return


def test_a_time_limit_is_a_dead_kernel_with_the_reason(cluster):
    env = SlurmEnvironment("--time", "10")
    stop = threading.Event()
    try:
        nb = _notebook("import time\nprint('started', flush=True)\ntime.sleep(600)")
        with env.applied():
            km = KernelManager(kernel_name=KERNEL_NAME)
            ender = threading.Thread(target=_end_time_now_once_running, args=(km, stop))
            ender.start()
            try:
                # Slurm signals every process of the job: the kernel may
                # still fail the cell (its worker was killed) before it dies
                # itself, or die first. Either way the cell ends, no hang.
                with pytest.raises((DeadKernelError, CellExecutionError)):
                    _client(env, nb, km=km, timeout=300).execute()
            finally:
                stop.set()
                ender.join()
                # nbclient leaves a kernel manager it was given to its owner.
                km.shutdown_kernel(now=True)
        reason = km.provisioner.exit_reason
        # Seen as TIMEOUT, or as COMPLETING with the reason TimeLimit when
        # the provisioner looked while Slurm was still ending the job.
        assert reason and ("TIMEOUT" in reason or "TimeLimit" in reason), reason
        assert env.leftovers() == []
    finally:
        env.cleanup()
