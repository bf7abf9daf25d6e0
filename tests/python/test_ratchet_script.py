"""scripts/run_ratchet.py outside the workspace: a clone without ../shared
skips the acceptance suite with a message, except under CI, which always
has it and must fail when it is missing."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lone_clone(tmp_path):
    clone = tmp_path / "elsewhere" / "project"
    (clone / "scripts").mkdir(parents=True)
    (clone / "tests" / "acceptance").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "run_ratchet.py", clone / "scripts")
    shutil.copy(ROOT / "tests" / "acceptance" / "ratchet.txt", clone / "tests" / "acceptance")
    return clone


def _run(clone, ci):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, str(clone / "scripts" / "run_ratchet.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_the_suite_a_local_run_skips_and_says_so(tmp_path):
    done = _run(_lone_clone(tmp_path), ci=None)
    assert done.returncode == 0
    assert "SKIPPED" in done.stdout and "acceptance suite" in done.stdout


def test_without_the_suite_ci_fails(tmp_path):
    done = _run(_lone_clone(tmp_path), ci="true")
    assert done.returncode == 2
    assert "missing" in done.stderr


def test_ci_false_counts_as_local(tmp_path):
    assert _run(_lone_clone(tmp_path), ci="false").returncode == 0
