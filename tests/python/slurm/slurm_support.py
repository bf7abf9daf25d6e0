"""The Slurm tests' world: the one-node cluster of scripts/slurm_local.sh,
an `openai4s-python-slurm` kernelspec installed by the real CLI into a
private prefix, and the private kernel directories in a temp dir."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "slurm_local.sh"
KERNEL_BINARY = REPO / "build" / "release" / "apps" / "jupyter_kernel" / "openai4s-jupyter-kernel"
KERNEL_NAME = "openai4s-python-slurm"
DAEMONS = ("slurmctld", "slurmd", "munged", "sbatch")


def script(action, check=False):
    return subprocess.run(
        ["bash", str(SCRIPT), action], capture_output=True, text=True, timeout=120, check=check
    )


def slurm_conf():
    line = script("env", check=True).stdout.strip()
    return line.split("=", 1)[1]


def missing_reason():
    absent = [name for name in DAEMONS if not shutil.which(name, path=os.defpath + ":/usr/sbin")]
    if absent:
        return f"{', '.join(absent)} not installed (make setup installs Debian's slurm packages)"
    if not os.access(KERNEL_BINARY, os.X_OK):
        return f"{KERNEL_BINARY.name} is not built (needs xeus-dev; run make setup)"
    return None


class ClusterUsers:
    """The test processes using the cluster (pytest-xdist runs several),
    under one lock: the first starts it when it is down and marks it as
    the tests' own; the last to leave stops it only if so marked, so a
    cluster someone started by hand is left running."""

    def __init__(self):
        self.root = Path(tempfile.gettempdir()) / "openai4s-slurm-tests"
        self.root.mkdir(exist_ok=True)
        self.marker = self.root / "started-by-tests"

    def __enter__(self):
        import fcntl

        self._lock = open(self.root / "lock", "w")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        self._lock.close()

    def _live_users(self):
        users = []
        for entry in self.root.glob("user-*"):
            pid = int(entry.name.split("-", 1)[1])
            if os.path.exists(f"/proc/{pid}"):
                users.append(entry)
            else:
                entry.unlink()
        return users

    def join(self):
        """None once the cluster is up, else why it could not start."""
        if script("status").returncode != 0:
            started = script("start")
            if started.returncode != 0:
                return started.stderr.strip()
            self.marker.touch()
        (self.root / f"user-{os.getpid()}").touch()
        return None

    def leave(self):
        (self.root / f"user-{os.getpid()}").unlink(missing_ok=True)
        if not self._live_users() and self.marker.exists():
            script("stop")
            self.marker.unlink()


class SlurmEnvironment:
    """prefix/ (the kernelspec), data/ (the store), workspace/ (the job's
    cwd) and kernels/ (the provisioner's private directories)."""

    def __init__(self, *install_args):
        self._tmp = tempfile.TemporaryDirectory(prefix="o4s-slurm-")
        root = Path(self._tmp.name)
        self.prefix = root / "prefix"
        self.data_dir = root / "data"
        self.workspace = root / "workspace"
        self.kernels = root / "kernels"
        self.workspace.mkdir()
        subprocess.run(
            [sys.executable, "-m", "openai4s", "jupyter", "install", "--prefix", str(self.prefix)]
            + ["--executable", str(KERNEL_BINARY), "--slurm", *install_args],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )

    def environ(self):
        env = dict(os.environ)
        env["JUPYTER_PATH"] = str(self.prefix / "share" / "jupyter")
        env["OPENAI4S_DATA_DIR"] = str(self.data_dir)
        env["OPENAI4S_SLURM_DIR"] = str(self.kernels)
        return env

    @contextlib.contextmanager
    def applied(self):
        saved = dict(os.environ)
        wanted = self.environ()
        os.environ.clear()
        os.environ.update(wanted)
        try:
            yield self
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def leftovers(self):
        """Whatever the provisioner left in its base directory."""
        return sorted(p.name for p in self.kernels.iterdir()) if self.kernels.exists() else []

    def cleanup(self):
        self._tmp.cleanup()


def job_state(job_id):
    """The job's state as slurmctld has it ("RUNNING", "CANCELLED", ...)."""
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", str(job_id)], capture_output=True, text=True
    ).stdout
    for field in out.split():
        if field.startswith("JobState="):
            return field.split("=", 1)[1]
    return "GONE"


def active_jobs():
    """Ids of the cluster's pending or running jobs."""
    out = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout
    return set(out.split())


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s: {what}")
