"""What the REPL tells a person about the kernel's sandbox: where the
workspace is and whether the sandbox is on (the banner), and why a file
that is plainly on this machine was not found by a cell (the hint).
"""

import os

from openai4s import _core


def _status(kernel):
    """`Kernel.sandbox_status` as a dict (None when the kernel has none)."""
    try:
        status = kernel.sandbox_status
    except Exception:
        return None
    if hasattr(status, "to_dict"):
        status = status.to_dict()
    return status if isinstance(status, dict) else None


def is_sandboxed(kernel):
    status = _status(kernel)
    return status is not None and status.get("backend") == "bubblewrap"


def banner(kernel, cwd):
    """Two lines: the workspace, and the sandbox's state in plain words."""
    status = _status(kernel)
    lines = [f"Workspace: {cwd}"]
    if status is None:
        lines.append("Sandbox: unknown (this kernel does not report one)")
    elif status.get("backend") == "bubblewrap":
        blocked = status.get("network_policy") == "blocked"
        network = "network blocked" if blocked else "network allowed"
        extra = _read_paths()
        reads = f"; also read-only: {', '.join(extra)}" if extra else ""
        state = "on" if status.get("state") == "enabled" else status.get("state")
        lines.append(
            f"Sandbox: {state} (bubblewrap): cells write only the workspace, {network}{reads}"
        )
    else:
        why = status.get("reason") or status.get("warning") or status.get("detail")
        lines.append(
            f"Sandbox: off ({status.get('mode')}): cells can read and write what you can"
            + (f" -- {why}" if why else "")
        )
    return "\n".join(lines) + "\n"


def _read_paths():
    value = os.environ.get("OPENAI4S_KERNEL_SANDBOX_READ_PATHS", "")
    return [path for path in value.split(":") if path]


def not_found_hint(error, kernel, cwd):
    """One line when a sandboxed cell failed to find a file that exists on
    this machine (outside what the sandbox shows), else None. The reading
    of the error is the C++ core's, shared with the Jupyter kernel."""
    if not error or not is_sandboxed(kernel):
        return None
    return _core.outside_sandbox_hint(error, str(cwd))
