"""``host.bash``: a shell run inside the worker, one host authorization each.

The host never executes the command. For every call the worker validates it
locally (including the static precheck, before any RPC), asks the host for a
one-shot capability bound to this exact command, directory and worker spawn
(``authorize_bash``), checks that capability, consumes it
(``consume_bash_authorization``), runs the command in its own session with
bounded output, and reports a safe summary (``record_bash_result``).
"""

import builtins
import hashlib
import math
import os
import secrets
import time

from openai4s.sdk import precheck as _precheck
from openai4s.sdk import shell_run, workspace_diff

CAPABILITY_VERSION = "openai4s-bash-capability-v1"
CAPABILITY_FIELDS = (
    "version",
    "token",
    "command_sha256",
    "cwd",
    "workspace",
    "allowed_root",
    "generation",
    "challenge",
    "issued_at_ms",
    "expires_at_ms",
)
MAX_CAPABILITY_TTL_MS = 60_000
MAX_CLOCK_SKEW_MS = 5_000
REPLAY_WINDOW = 1024

_used_tokens = {}  # token -> None; insertion-ordered bounded replay window


def _fail(message, cause=None):
    error = RuntimeError(message)
    if cause is not None:
        raise error from cause
    raise error


def _refuse(message):
    """A refusal is a decision, not a fault: the cell shows this one line,
    not a traceback through the facade (as for a refused approval)."""
    error = RuntimeError(message)
    error._openai4s_one_line = True
    raise error


def _validate(command, timeout):
    if not isinstance(command, str) or not command.strip():
        _fail("bash: empty command")
    if "\x00" in command:
        _fail("bash: command contains a NUL byte")
    timeout = timeout or 120
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        _fail("bash: timeout must be a number")
    timeout = float(timeout)
    if not math.isfinite(timeout) or timeout <= 0:
        _fail("bash: timeout must be finite and positive")
    reason = _precheck.precheck(command)
    if reason:
        _refuse(f"bash: blocked by static safety precheck: {reason}")
    return timeout


def _domains(command):
    import re

    # The host after any userinfo: in https://user:pass@host the domain is
    # host, not user.
    hosts = re.findall(r"https?://(?:[^\s/?#@]*@)?([A-Za-z0-9.-]+)", command, re.IGNORECASE)
    return sorted({host.lower().rstrip(".") for host in hosts if host})


def _check_egress(call, command):
    domains = _domains(command)
    if not domains:
        return
    try:
        verdict = call("egress_check", [{"domains": domains}])
    except Exception:
        verdict = _local_egress_verdict(domains)
    if isinstance(verdict, dict) and verdict.get("blocked"):
        blocked = verdict["blocked"]
        _refuse(verdict.get("message") or f"bash: domain {blocked} is outside the egress allowlist")


def _local_egress_verdict(domains):
    # The host could not be asked. Under an allowlist policy that is not
    # permission: refuse rather than guess.
    mode = os.environ.get("OPENAI4S_EGRESS", "").strip().lower()
    if mode == "allowlist":
        return {"blocked": domains[0]}
    return None


def _working_directory(workdir):
    base = os.getcwd()
    target = base if workdir is None else os.path.join(base, os.fspath(workdir))
    resolved = os.path.realpath(target)
    if not os.path.isdir(resolved):
        _fail(f"bash: workdir not found: {workdir}")
    return resolved


def _sha256(command):
    return hashlib.sha256(command.encode("utf-8", "surrogatepass")).hexdigest()


def _check_capability(capability, binding):
    if not isinstance(capability, dict):
        _fail("bash: host authorization returned no capability")
    if "error" in capability:
        _fail(str(capability["error"]))
    missing = [field for field in CAPABILITY_FIELDS if field not in capability]
    if missing:
        _fail(f"bash: host authorization omitted capability fields: {', '.join(missing)}")
    if capability["version"] != CAPABILITY_VERSION:
        _fail("bash: host capability version is not supported")
    token = capability["token"]
    if not isinstance(token, str) or len(token) < 24:
        _fail("bash: host capability token is malformed")
    for key in ("command_sha256", "cwd", "generation", "challenge"):
        if capability[key] != binding[key]:
            _fail(f"bash: host capability binding mismatch ({key})")
    _check_capability_paths(capability)
    _check_capability_times(capability)
    return token


def _check_capability_paths(capability):
    paths = {}
    for key in ("cwd", "workspace", "allowed_root"):
        value = capability[key]
        if not isinstance(value, str) or not os.path.isdir(value):
            _fail(f"bash: host capability {key} is not a directory")
        paths[key] = os.path.realpath(value)
    cwd = paths["cwd"]
    inside = any(
        cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep)
        for root in (paths["allowed_root"], paths["workspace"])
    )
    if not inside:
        _fail("bash: host capability cwd is outside its allowed root")


def _check_capability_times(capability):
    issued, expires = capability["issued_at_ms"], capability["expires_at_ms"]
    numbers = all(
        isinstance(value, (int, float)) and not isinstance(value, bool)
        for value in (issued, expires)
    )
    if not numbers:
        _fail("bash: host capability times are malformed")
    now = time.time() * 1000
    if expires <= now:
        _fail("bash: host capability expired")
    if issued > now + MAX_CLOCK_SKEW_MS:
        _fail("bash: host capability was issued in the future")
    if expires <= issued or expires - issued > MAX_CAPABILITY_TTL_MS:
        _fail("bash: host capability lifetime is invalid")


def _spend(token):
    if token in _used_tokens:
        _fail("bash: host capability token replayed")
    _used_tokens[token] = None
    while len(_used_tokens) > REPLAY_WINDOW:
        del _used_tokens[next(iter(_used_tokens))]


def _host_reason(exc):
    text = str(exc)
    prefix = "host.authorize_bash error: "
    return text[len(prefix) :] if text.startswith(prefix) else text


class PermissionError(builtins.PermissionError, RuntimeError):  # noqa: A001
    """A host.bash the permission gate refused. Shown as the builtin's name;
    also a RuntimeError, which host.bash has always raised for refusals."""


#: Characters of the command a refusal quotes (the cell has the whole text).
_REFUSAL_COMMAND_CHARS = 200

#: The host gate's refusal texts (permission_gate.cpp), and what the cell is
#: told for each: who refused, and for an unattended run how to allow it.
_REFUSALS = {
    "denied by user": "host.bash was denied by the user: {command}",
    "approval required but no interactive channel is attached": (
        "host.bash needs approval and nobody can be asked here (unattended): {command}"
        " -- allow it with OPENAI4S_UNATTENDED_APPROVAL=allow or a standing allow rule"
    ),
    "approval required but this client cannot show approval prompts": (
        "host.bash needs approval and this client cannot show approval prompts"
        " (it declared no MCP elicitation): {command} -- use a client that supports"
        " elicitation, or add a standing allow rule"
    ),
    "blocked by a standing 'deny' permission rule": (
        "host.bash is refused by a standing 'deny' permission rule: {command}"
    ),
}


def _refusal(reason, command):
    """The PermissionError for a permission refusal by the host, else None."""
    prefix = "Permission denied: "
    if not reason.startswith(prefix):
        return None
    why = reason[len(prefix) :]
    command = " ".join(command.split())  # one line, whatever the command's layout
    # Escapes, not raw controls: an ESC sequence in the command must not
    # repaint the terminal that shows this line (the same rule as prompts).
    command = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in command
    )
    if len(command) > _REFUSAL_COMMAND_CHARS:
        command = command[: _REFUSAL_COMMAND_CHARS - 1] + "\u2026"
    template = _REFUSALS.get(why, "host.bash was refused ({why}): {command}")
    error = PermissionError(template.format(command=command, why=why))
    error._openai4s_one_line = True
    return error


def _authorize(call, binding):
    try:
        capability = call("authorize_bash", [binding])
    except Exception as exc:
        refusal = _refusal(_host_reason(exc), binding["command"])
        if refusal is not None:
            # A decision, not a fault: one line the user can act on, with no
            # traceback through this module (see runtime/tracebacks.py).
            raise refusal from None
        # The host's reason (a precheck the host's stricter table caught, a
        # broken channel) is what the user can act on: say it here too, not
        # only in __cause__.
        _fail(
            "bash: host authorization unavailable; command was not executed "
            f"({_host_reason(exc)})",
            exc,
        )
    token = _check_capability(capability, binding)
    _spend(token)
    consume = {
        "token": token,
        "command_sha256": binding["command_sha256"],
        "cwd": binding["cwd"],
        "generation": binding["generation"],
        "challenge": binding["challenge"],
    }
    try:
        receipt = call("consume_bash_authorization", [consume])
    except Exception as exc:
        _fail("bash: host capability could not be consumed; command was not executed", exc)
    if not isinstance(receipt, dict) or not receipt.get("ok"):
        _fail("bash: host did not confirm the capability; command was not executed")
    return consume


def _generation(generation):
    return generation or os.environ.get("OPENAI4S_KERNEL_GENERATION") or f"worker:{os.getpid()}"


def run(call, command, *, timeout=120, workdir=None, generation=None):
    """Run ``command`` after one-shot host authorization; returns its summary.

    ``call`` is the facade's encoded RPC (keys travel camelCase).
    """
    timeout = _validate(command, timeout)
    _check_egress(call, command)
    cwd = _working_directory(workdir)
    binding = {
        "command": command,
        "command_sha256": _sha256(command),
        "cwd": cwd,
        "workspace": os.environ.get("OPENAI4S_WORKSPACE"),
        "generation": _generation(generation),
        "challenge": secrets.token_urlsafe(24),
        "timeout": timeout,
    }
    consumed = _authorize(call, binding)
    root = os.environ.get("OPENAI4S_WORKSPACE") or cwd
    before = workspace_diff.snapshot(root)
    outcome = shell_run.run_shell(command, cwd=cwd, timeout=timeout)
    diff = workspace_diff.diff(before, workspace_diff.snapshot(root))
    report = {
        **consumed,
        "status": outcome.status,
        "exit_code": outcome.exit_code,
        **outcome.streams(),
        "duration_ms": outcome.duration_ms,
        "workspace_diff": diff,
    }
    try:
        recorded = call("record_bash_result", [report])
    except Exception:
        recorded = None
    if outcome.status == "launch_failed":
        _fail(f"bash: failed to launch command: {outcome.launch_error}")
    if outcome.status == "timed_out":
        _fail(f"bash: timed out after {timeout:g}s")
    return {
        "exit_code": outcome.exit_code,
        **outcome.streams(),
        "workdir": cwd,
        "duration_ms": outcome.duration_ms,
        "workspace_diff": diff,
        "audit_recorded": isinstance(recorded, dict) and bool(recorded.get("ok")),
    }
