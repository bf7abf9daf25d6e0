"""The kernel's OS sandbox as the Python API reports it.

The sandbox itself (mode resolution, bubblewrap launch, seccomp, limits, the
self-test, interrupt delivery) lives in the C++ core; this module is its face:
`KernelSandbox` is what `Kernel._sandbox` holds, `SandboxStatus` what
`Kernel.sandbox_status` serialises, and `SandboxUnavailableError` what a kernel
raises when `OPENAI4S_KERNEL_SANDBOX=enforce` cannot be honoured.
"""

import os
from dataclasses import asdict, dataclass, field

#: Modes accepted by `OPENAI4S_KERNEL_SANDBOX` and by `KernelSandbox(mode=...)`.
MODES = ("auto", "enforce", "off")

_REMOTE_REASON = "this kernel runs on a remote node; the daemon's OS sandbox does not apply to it"


class SandboxUnavailableError(RuntimeError):
    """The sandbox the mode demands cannot be set up; the message says why
    and what to do about it."""


@dataclass(frozen=True)
class SandboxStatus:
    mode: str
    state: str  # enabled | degraded | disabled | unavailable
    backend: str  # bubblewrap | none | remote
    enforced: bool
    self_test_passed: bool
    network_policy: str  # blocked | raw_allowed | not_enforced | unproven
    workspace: str
    temp_dir: str
    detail: str
    warning: str
    reason: str = ""
    checks: list = field(default_factory=list)
    limits: dict = field(default_factory=dict)
    seccomp: str = ""
    version: str = ""
    #: The uid mapping (who the cell is on the host), once a worker ran.
    identity: dict = None
    #: memory / processes / cpu: the limit and what enforces it.
    envelope: dict = field(default_factory=dict)

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


class KernelSandbox:
    """A kernel's view of its sandbox. Built before the kernel's core, bound
    to it once the core exists; `status` and `_bwrap_worker_pidfd` read the
    core's live state (both change on restart)."""

    def __init__(self, workspace, *, mode=None):
        if mode is not None and str(mode).strip().lower() not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)} (got {mode!r})")
        self.workspace = workspace
        #: None = decided by OPENAI4S_KERNEL_SANDBOX at kernel start.
        self.requested_mode = mode
        self._core = None
        self._remote = False

    def _bind(self, core, *, remote=False):
        self._core = core
        self._remote = remote

    @property
    def status(self):
        data = self._core.sandbox_status() if self._core is not None else None
        if data is None:
            data = self._remote_status() if self._remote else self._unbound_status()
        return SandboxStatus.from_dict(data)

    @property
    def _bwrap_worker_pidfd(self):
        """The host-side pidfd pinning the sandboxed worker (its fdinfo `Pid:`
        is the worker's host pid), or None when the worker is not sandboxed."""
        if self._core is None:
            return None
        return self._core.sandbox_worker_pidfd

    def close(self):
        # The core owns every sandbox resource and frees it with the kernel.
        pass

    def _remote_status(self):
        return {
            "mode": self.requested_mode or _mode_from_environment(),
            "state": "disabled",
            "backend": "remote",
            "enforced": False,
            "self_test_passed": False,
            "network_policy": "unproven",
            "workspace": self.workspace,
            "temp_dir": "",
            "detail": _REMOTE_REASON,
            "warning": "",
            "reason": _REMOTE_REASON,
        }

    def _unbound_status(self):
        return {
            "mode": self.requested_mode or _mode_from_environment(),
            "state": "disabled",
            "backend": "none",
            "enforced": False,
            "self_test_passed": False,
            "network_policy": "not_enforced",
            "workspace": self.workspace,
            "temp_dir": "",
            "detail": "the kernel has not started",
            "warning": "",
        }


def _mode_from_environment():
    return os.environ.get("OPENAI4S_KERNEL_SANDBOX", "auto").strip().lower() or "auto"


def sandbox_for(cwd, mode=None):
    """The sandbox of a kernel whose workspace is `cwd` (None: the current
    directory, which the worker inherits)."""
    return KernelSandbox(os.path.realpath(cwd) if cwd else os.getcwd(), mode=mode)
