"""`make run`'s set-up (`scripts/setup.sh --repl`) on an already set-up
checkout: only the REPL's targets, no browser packages, no warnings, and
`make help` as the way in. (The fresh-clone build time is measured, not
asserted: docs/performance.md.)"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(
    not (ROOT / "build" / "release" / "build.ninja").is_file() or shutil.which("ninja") is None,
    reason="needs the release build (make setup)",
)
def test_the_repl_setup_builds_only_what_the_repl_loads():
    done = subprocess.run(
        ["bash", "scripts/setup.sh", "--repl"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        # The environment this checkout was set up in: under CI=true the
        # build is configured with -Werror, and a run without CI would
        # reconfigure it and recompile the whole host core mid-suite (while
        # other tests load _core) only to prove what the -Werror build did.
        env=dict(os.environ),
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "npm" not in output and "tests/browser" not in output
    assert "warning:" not in output
    # What it asks Ninja for: the host module and the workers' extensions
    # (Python's, and the R worker's fd helper).
    script = (ROOT / "scripts" / "setup.sh").read_text()
    repl = re.search(r"--repl\)\n(.*?);;", script, re.S).group(1)
    assert re.search(r"targets=\((.*?)\)", repl).group(1).split() == [
        "_core",
        "_fast_open",
        "_r_fds",
    ]
    assert "test_packages" not in repl
