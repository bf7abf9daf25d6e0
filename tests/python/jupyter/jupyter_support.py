"""Helpers for the Jupyter kernel tests: a kernelspec installed by the real
CLI into a private prefix, found by real Jupyter clients through
JUPYTER_PATH, with the store in a data dir outside the workspace."""

import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
KERNEL_BINARY = REPO / "build" / "release" / "apps" / "jupyter_kernel" / "openai4s-jupyter-kernel"
KERNEL_NAME = "openai4s-python"
R_KERNEL_NAME = "openai4s-r"


def kernel_missing_reason():
    if not os.access(KERNEL_BINARY, os.X_OK):
        return f"{KERNEL_BINARY.name} is not built (needs xeus-dev; run make setup)"
    return None


def run_cli(*args, env=None, check=True):
    return subprocess.run(
        [sys.executable, "-m", "openai4s", "jupyter", *args],
        capture_output=True,
        text=True,
        env=env,
        check=check,
        timeout=120,
    )


class KernelEnvironment:
    """A temp root holding prefix/ (the kernelspec), data/ (the store) and
    workspace/ (the kernel's cwd); `environ()` is what clients need."""

    def __init__(self, sandbox_mode=None, lang="python"):
        self._tmp = tempfile.TemporaryDirectory(prefix="o4s-jupyter-")
        root = Path(self._tmp.name)
        self.prefix = root / "prefix"
        self.data_dir = root / "data"
        self.workspace = root / "workspace"
        self.workspace.mkdir()
        self.sandbox_mode = sandbox_mode
        self.kernel_name = R_KERNEL_NAME if lang == "r" else KERNEL_NAME
        run_cli(
            "install",
            "--prefix",
            str(self.prefix),
            "--executable",
            str(KERNEL_BINARY),
            "--lang",
            lang,
        )

    @property
    def spec_file(self):
        """The installed kernelspec's kernel.json."""
        return self.prefix / "share" / "jupyter" / "kernels" / self.kernel_name / "kernel.json"

    def environ(self):
        env = dict(os.environ)
        env["JUPYTER_PATH"] = str(self.prefix / "share" / "jupyter")
        env["OPENAI4S_DATA_DIR"] = str(self.data_dir)
        if self.sandbox_mode:
            env["OPENAI4S_KERNEL_SANDBOX"] = self.sandbox_mode
        return env

    @contextlib.contextmanager
    def applied(self):
        """os.environ set for in-process clients (jupyter_client), restored after."""
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.environ())
        try:
            yield self
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def cleanup(self):
        self._tmp.cleanup()


def bubblewrap_unavailable_reason():
    """None when an enforced sandbox starts here, else why not."""
    from openai4s.kernel import Kernel
    from openai4s.kernel.sandbox_status import SandboxUnavailableError, sandbox_for

    with tempfile.TemporaryDirectory() as workspace:
        try:
            Kernel(cwd=workspace, sandbox=sandbox_for(workspace, mode="enforce")).shutdown()
        except SandboxUnavailableError as exc:
            return str(exc)
    return None


def alive(pid):
    """Whether `pid` is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def descendants(pid):
    """Pids of every live descendant of `pid` (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found
