"""Why a sandboxed cell did not find a file that is plainly on this machine:
one line on the response's stderr, as the Jupyter kernel publishes it.

The sandbox shows a cell only its workspace and a few read-only paths, so a
path the caller can open is missing for the cell. The reading of the error
and the host-side check are the C++ core's (`_core.outside_sandbox_hint`),
shared with the Jupyter kernel and the REPL.
"""

from openai4s import _core


def hint_for(response, status, cwd):
    """The hint line for a failed cell's `response` (a Kernel.execute
    dict), or None: only for a kernel whose `status` (sandbox_status as a
    dict) says bubblewrap, and only when the missing path exists here."""
    if not isinstance(response, dict) or not response.get("error"):
        return None
    if not isinstance(status, dict) or status.get("backend") != "bubblewrap":
        return None
    # R names the file it could not open in a warning (stderr) before the
    # error; Python in the error's last line.
    reported = f"{response.get('stderr') or ''}\n{response['error']}"
    workspace = status.get("workspace") or cwd
    return _core.outside_sandbox_hint(reported, str(workspace))


def add_hint(response, status, cwd):
    """Appends the hint (if any) to `response["stderr"]`; returns it."""
    hint = hint_for(response, status, cwd)
    if hint:
        stderr = response.get("stderr") or ""
        if stderr and not stderr.endswith("\n"):
            stderr += "\n"
        response["stderr"] = stderr + hint
    return hint
