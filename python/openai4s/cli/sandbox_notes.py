"""What the REPL tells a person about the kernel's sandbox: where the
workspace is and whether the sandbox is on (the banner), and where the
hint a sandboxed cell's missing file gets goes (after the traceback).
"""

import os

from openai4s.kernel import sandbox_hint


def _status(kernel):
    """`Kernel.sandbox_status` as a dict (None when the kernel has none)."""
    try:
        status = kernel.sandbox_status
    except Exception:
        return None
    if hasattr(status, "to_dict"):
        status = status.to_dict()
    return status if isinstance(status, dict) else None


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


def split_hint(result, kernel, cwd):
    """The response's stderr without the outside-the-sandbox hint the
    Kernel appended to it, and that hint (or None): the REPL shows the hint
    after the traceback. The hint reads the error, not stderr's last line,
    so recomputing it here gives the line the Kernel appended."""
    stderr = result.get("stderr") or ""
    hint = sandbox_hint.hint_for(result, _status(kernel), str(cwd))
    if hint and stderr.endswith(hint):
        return stderr[: -len(hint)], hint
    return stderr, hint
