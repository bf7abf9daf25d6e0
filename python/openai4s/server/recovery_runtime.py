"""Bringing a fresh Python worker generation up: the skill bootstrap cell and
an environment probe, recorded as a manifest of what the kernel is."""

import hashlib
import json
import secrets
import sys
from pathlib import Path

# The probe's cell text, kept with the worker runtime (it runs there).
_PROBE = (
    Path(__file__).parent.parent / "kernel" / "runtime" / "environment_probe_cell.py"
).read_text(encoding="utf-8")


def _probe(kernel):
    marker = f"__OPENAI4S_PY_ENV_{secrets.token_hex(16)}__"
    result = kernel.execute(_PROBE.replace("MARKER", marker), origin="system")
    if result.get("error"):
        raise RuntimeError(f"Python environment probe failed: {result['error'][:500]}")
    stdout = result.get("stdout") or ""
    index = stdout.rfind(marker)
    if index < 0:
        raise RuntimeError("recovery health probe marker was not returned")
    line = stdout[index + len(marker) :].split("\n", 1)[0]
    try:
        info = json.loads(line)
    except ValueError as exc:
        raise RuntimeError("recovery health probe returned invalid JSON") from exc
    if not isinstance(info, dict):
        raise RuntimeError("Python environment probe returned no object")
    return info


def bootstrap_python_generation(kernel, workspace, bootstrap_code):
    """Runs the bootstrap as a system cell, probes the environment, and
    returns the generation's manifest record (status active/failed/skipped)."""
    code = str(bootstrap_code or "")
    errors = []
    if not code.strip():
        status = "skipped"
    else:
        try:
            response = kernel.execute(code, origin="system")
            if response.get("error"):
                status = "failed"
                errors.append(str(response["error"])[:500])
            else:
                status = "active"
        except Exception as exc:  # a dead worker is a failed bootstrap, not a crash
            status = "failed"
            errors.append(str(exc)[:500])
    try:
        info = _probe(kernel)
    except Exception as exc:
        status = "failed"
        errors.append(str(exc))
        info = {}
    interpreter = info.get("interpreter") or getattr(kernel, "python", None) or sys.executable
    cwd = getattr(kernel, "cwd", None)
    environment = {
        "environment_name": getattr(kernel, "env_name", None),
        "environment_root": getattr(kernel, "env_root", None),
        "interpreter_prefix": info.get("prefix"),
        "base_prefix": info.get("base_prefix"),
    }
    fingerprint = {
        "language": "python",
        "interpreter": interpreter,
        "runtime_version": info.get("runtime_version", "unknown"),
        "environment": environment,
        "sdk_version": info.get("sdk_version"),
        "package_manifest": info.get("package_manifest", []),
        "locale": info.get("locale", {}),
    }
    record = {
        "version": 2,
        "language": "python",
        "interpreter": interpreter,
        "runtime_version": fingerprint["runtime_version"],
        "working_directory": str(Path(cwd or workspace).resolve()),
        "environment": environment,
        "sdk_version": info.get("sdk_version"),
        "random_seed_policy": "namespace_process_state",
        "sidecars": [],
        "init_hooks": [code] if status != "skipped" else [],
        "package_manifest": fingerprint["package_manifest"],
        "locale": fingerprint["locale"],
        "environment_hash": hashlib.sha256(
            json.dumps(fingerprint, sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest(),
        "status": status,
        "bootstrap_code_sha256": hashlib.sha256(code.encode()).hexdigest() if code else None,
        "loaded_sidecars": [],
        "sidecar_capture_status": "complete",
        "project_init_hooks": [],
        "environment_name": environment["environment_name"],
        "environment_root": environment["environment_root"],
    }
    if errors:
        record["error"] = "; ".join(errors)
    return record
