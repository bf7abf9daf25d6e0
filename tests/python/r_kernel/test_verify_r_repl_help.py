"""An independent check of the README's promise for the R REPL: "Tab
completes and `name?` shows R's help". Through the real `openai4s repl
--lang r` process and a real R worker: `name?` (and `name??`) is answered
by the worker's inspect request (R's help page, or a description of a
value that runs none of its methods), not sent to R's parser as a cell."""

import os
import subprocess
import sys


def _repl(workspace, script):
    return subprocess.run(
        [sys.executable, "-m", "openai4s", "repl", "--lang", "r", "--cwd", str(workspace)],
        input=script,
        capture_output=True,
        text=True,
        env=dict(os.environ, HOME=str(workspace), OPENAI4S_KERNEL_SANDBOX="off"),
        timeout=120,
    )


def test_name_question_mark_shows_r_help_in_the_r_repl(workspace):
    script = (
        "paste?\n"
        "frame <- data.frame(alpha = 1:3)\n"
        "frame?\n"
        "read.csv??\n"
        "no_such_name_anywhere?\n"
        "cat('after\\n')\n"
    )
    proc = _repl(workspace, script)
    shown = proc.stdout + proc.stderr
    assert "ParseError" not in shown, shown
    assert "Concatenate" in shown, shown
    assert "3 x 1 data.frame" in shown, shown
    assert "Data Input" in shown or "read.table" in shown, shown
    assert "Object `no_such_name_anywhere` not found." in shown, shown
    assert proc.stdout.endswith("after\n"), shown
    assert proc.returncode == 0, shown
