"""Runs the acceptance-suite items listed in tests/acceptance/ratchet.txt.

The suite lives outside the project (../shared/seed/test_kernel.py) and is
run unmodified. The ratchet only grows: every listed item must exist and
pass. pytest-timeout's signal method is never loaded for it (a seed fixture
patches signal.signal globally).

A clone outside the workspace has no ../shared: there the ratchet is skipped
with a message saying so. CI (CI=true) always has the suite, so a missing
suite there is a failure, never a skip.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "seed" / "test_kernel.py"
RATCHET = ROOT / "tests" / "acceptance" / "ratchet.txt"


def listed_items():
    items = []
    for line in RATCHET.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            items.append(line)
    return items


def _in_ci():
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def main():
    if not SEED.is_file():
        if _in_ci():
            print(f"ratchet: the acceptance suite is missing at {SEED}", file=sys.stderr)
            return 2
        print(
            f"ratchet: SKIPPED: the acceptance suite is not at {SEED} "
            "(a clone outside the workspace); CI always runs it"
        )
        return 0
    items = listed_items()
    if not items:
        print("ratchet: no items listed", file=sys.stderr)
        return 2
    node_ids = [f"{SEED}::{item}" for item in items]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:timeout"]
    command += ["-q", "-rfE", "--rootdir", str(ROOT), *node_ids]
    completed = subprocess.run(command, cwd=ROOT)
    if completed.returncode == 4 or completed.returncode == 5:
        print("ratchet: a listed item does not exist in the suite", file=sys.stderr)
    return completed.returncode


if __name__ == "__main__":
    sys.exit(main())
