"""What the report records about where and when it ran."""

import datetime
import os
import platform
import subprocess
from importlib import metadata

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load():
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _commit():
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=_ROOT, capture_output=True, text=True, timeout=10
        )
        return done.stdout.strip() or None
    except OSError:
        return None


def describe():
    return {
        "timestamp": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "ipykernel": _version("ipykernel"),
        "jupyter_client": _version("jupyter_client"),
        "commit": _commit(),
        "load_start": load(),
    }
