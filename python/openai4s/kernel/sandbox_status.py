"""The kernel's sandbox state as the API reports it.

Until the sandbox lands, every kernel runs unsandboxed and says so plainly
rather than implying an OS boundary it does not have.
"""

import os
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SandboxStatus:
    mode: str
    state: str
    backend: str
    enforced: bool
    self_test_passed: bool
    network_policy: str
    workspace: str
    temp_dir: str
    detail: str
    warning: str

    def to_dict(self):
        return asdict(self)


class NoSandbox:
    """No OS boundary: the worker runs as the host user."""

    _bwrap_worker_pidfd = None

    def __init__(self, workspace):
        self.status = SandboxStatus(
            mode="off",
            state="disabled",
            backend="none",
            enforced=False,
            self_test_passed=False,
            network_policy="not_enforced",
            workspace=workspace,
            temp_dir="",
            detail="no sandbox backend is built into this version",
            warning="",
        )

    def close(self):
        pass


def sandbox_for(cwd):
    return NoSandbox(os.path.realpath(cwd) if cwd else os.getcwd())
