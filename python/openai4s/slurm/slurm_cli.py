"""The Slurm commands the provisioner runs, and how their output is read.

Each runs without blocking the caller's event loop (Jupyter Server serves
every kernel from one loop). The state of a job comes from `scontrol show
job -o` (slurmctld keeps an ended job's record for MinJobAge); once that is
gone, from `sacct` where the cluster keeps accounting.
"""

import asyncio
import re
from dataclasses import dataclass

#: Slurm states in which the job still holds (or waits for) its kernel.
ACTIVE_STATES = frozenset(
    {"PENDING", "CONFIGURING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING"}
)
#: Seconds one Slurm command may take before it counts as failed.
_COMMAND_TIMEOUT = 30
#: Seconds a COMPLETING job is asked again for how it ended.
_COMPLETING_WAIT = 10


class SlurmError(RuntimeError):
    """A Slurm command failed; the message carries its stderr."""


@dataclass(frozen=True)
class JobStatus:
    job_id: str
    state: str
    reason: str = ""
    exit_code: str = ""
    nodes: str = ""

    @property
    def active(self):
        return self.state in ACTIVE_STATES

    def exit_status(self):
        """An integer for Popen-style callers: the kernel's own status, or
        128 + the signal that ended it; never 0 for an end Slurm imposed."""
        code, _, signal = self.exit_code.partition(":")
        status = int(code) if code.isdigit() else 0
        if not status and signal.isdigit() and int(signal):
            status = 128 + int(signal)
        if not status and self.state != "COMPLETED":
            status = 1
        return status

    def describe(self):
        """ "Slurm job 12 on node1 ended: TIMEOUT (TimeLimit), exit code 0:15"."""
        where = f" on {self.nodes}" if self.nodes and self.nodes != "(null)" else ""
        reason = f" ({self.reason})" if self.reason and self.reason != "None" else ""
        code = f", exit code {self.exit_code}" if self.exit_code else ""
        return f"Slurm job {self.job_id}{where} ended: {self.state}{reason}{code}"


async def run(*argv, env=None):
    """(returncode, stdout, stderr) of one Slurm command."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
    except FileNotFoundError:
        raise SlurmError(f"{argv[0]} not found: is this a Slurm login node?") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), _COMMAND_TIMEOUT)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise SlurmError(f"{argv[0]} did not answer in {_COMMAND_TIMEOUT} s") from None
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


async def submit(options, script, env):
    """Submits `script` with sbatch `options`; returns the job id."""
    code, out, err = await run("sbatch", "--parsable", *options, script, env=env)
    if code != 0:
        raise SlurmError(f"sbatch failed: {err.strip() or out.strip()}")
    # --parsable prints "jobid" or "jobid;cluster".
    return out.strip().split(";")[0]


def parse_scontrol(job_id, line):
    fields = dict(re.findall(r"(\w+)=(\S*)", line))
    state = fields.get("JobState", "UNKNOWN")
    return JobStatus(
        job_id,
        state,
        fields.get("Reason", ""),
        fields.get("ExitCode", ""),
        fields.get("NodeList", ""),
    )


def parse_sacct(job_id, text):
    # -P -n -X -o State,Reason,ExitCode,NodeList: "CANCELLED by 0|None|0:15|node1"
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) >= 4 and parts[0]:
            return JobStatus(job_id, parts[0].split()[0], parts[1], parts[2], parts[3])
    return None


async def status(job_id):
    """The job's JobStatus; state "UNKNOWN" when Slurm no longer knows it.

    A job that is COMPLETING has ended, but scontrol shows that flag instead
    of how it ended (CANCELLED, TIMEOUT, ...) until its processes are gone
    (the node-side launcher takes a last copy of the store then): asked
    again for a few seconds, so the reason is the end's own."""
    deadline = asyncio.get_running_loop().time() + _COMPLETING_WAIT
    while True:
        code, out, err = await run("scontrol", "show", "job", "-o", job_id)
        if code != 0 or "JobState=" not in out:
            break
        found = parse_scontrol(job_id, out)
        if found.state != "COMPLETING" or asyncio.get_running_loop().time() > deadline:
            return found
        await asyncio.sleep(0.2)
    code, out, _ = await run(
        "sacct", "-P", "-n", "-X", "-j", job_id, "-o", "State,Reason,ExitCode,NodeList"
    )
    found = parse_sacct(job_id, out) if code == 0 else None
    if found:
        return found
    return JobStatus(job_id, "UNKNOWN", f"no record left in Slurm: {err.strip()}")


async def cancel(job_id, signal=None):
    """scancel (a signal name or number signals every step, the batch
    script's process included, which is the kernel itself)."""
    argv = ["scancel", "--quiet"]
    if signal is not None:
        argv += ["--full", f"--signal={signal}"]
    code, out, err = await run(*argv, job_id)
    # Cancelling a job that has already ended is not a failure (scancel
    # --quiet still exits 1 for it): the kernel is gone either way.
    if code != 0 and (await status(job_id)).active:
        raise SlurmError(f"scancel {job_id} failed: {err.strip() or out.strip()}")
