"""The REPL keeps a standby worker, and `%restart` swaps it in (issue 28);
`--no-standby` turns it off. Driven through the real REPL process: the
test writes cells to its stdin one at a time and reads the workers under
it from /proc (host pids: a sandboxed worker's own pid means nothing here)."""

import os
import subprocess
import sys
import time

from repl_support import descendants, gone

_DEADLINE_S = 60


def _workers(pid):
    """The REPL's live Python workers, oldest first."""
    found = []
    for child in descendants(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{child}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # The interpreter itself, not the bubblewrap processes whose
        # command lines name it too.
        interpreter = not argv[0].endswith(b"bwrap")
        if fields[0] != "Z" and interpreter and any(arg.endswith(b"worker.py") for arg in argv):
            found.append((int(fields[19]), child))  # start time, in clock ticks
    return [child for _, child in sorted(found)]


def _wait_for(predicate, what):
    deadline = time.monotonic() + _DEADLINE_S
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


class _Repl:
    def __init__(self, tmp_path, *args):
        env = dict(os.environ, HOME=str(tmp_path))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "openai4s", "repl", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=env,
        )

    def cell(self, text):
        """Runs one single-line cell and returns its first output line."""
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline()

    def close(self):
        out, err = self.proc.communicate(timeout=_DEADLINE_S)
        return self.proc.returncode, err


def test_restart_swaps_in_the_standby_started_before_it(tmp_path):
    repl = _Repl(tmp_path)
    try:
        assert repl.cell("print('one')") == "one\n"
        # The standby is started in the background after the first worker.
        _wait_for(lambda: len(_workers(repl.proc.pid)) == 2, "the standby worker")
        first, standby = _workers(repl.proc.pid)
        assert repl.cell("x = 1\n%restart\nprint('x' in globals())") == "False\n"
        # The cell after %restart ran on the standby that was started
        # before it; the old worker is gone and a next standby follows.
        assert gone(first)
        _wait_for(lambda: len(_workers(repl.proc.pid)) == 2, "the next standby")
        assert _workers(repl.proc.pid)[0] == standby
    finally:
        status, err = repl.close()
    assert status == 0, err
    assert "restarted" in err


def test_no_standby_keeps_one_worker_and_restart_starts_a_new_one(tmp_path):
    repl = _Repl(tmp_path, "--no-standby")
    try:
        assert repl.cell("print('one')") == "one\n"
        (first,) = _workers(repl.proc.pid)
        assert repl.cell("%restart\nprint('two')") == "two\n"
        assert gone(first)
        assert len(_workers(repl.proc.pid)) == 1
    finally:
        status, err = repl.close()
    assert status == 0, err
