"""An independent check that Tab cannot freeze the REPL for good: in a real
terminal (tmux), a cell makes its worker hang in every completion request;
typing goes on while it waits (completion is asked from a thread), Tab
comes back within the idle bound (shortened to 10 s for the test, 30 s by
default) with the silent worker stopped; once the line is left
(Ctrl-C here) the REPL says in its own words what happened (it starts the
fresh worker itself, so no API advice to "call restart()"), and the next
cell runs on a fresh worker."""

import shutil
import sys

import pytest

from repl_support import TmuxPane, descendants, gone

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

#: The REPL with the manager's idle bound shortened (the knob the manager
#: tests set with monkeypatch), started as `python -m openai4s repl` is.
_REPL = (
    "import sys\n"
    "from openai4s.kernel import manager\n"
    "manager._IDLE_REPLY_TIMEOUT_S = 10.0\n"
    "from openai4s.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
#: A cell that leaves its worker's completion handler asleep for good.
_DEAF_CELL = (
    "import importlib, time; importlib.import_module('openai4s.kernel.runtime.code_help')"
    ".code_help_reply = lambda *a, **k: time.sleep(10 ** 6); keep_me = 1"
)


def test_tab_on_a_worker_that_never_answers_comes_back_in_repl_words(tmp_path):
    pane = TmuxPane(tmp_path)
    try:
        pane.start(
            [
                "env",
                f"HOME={tmp_path}",
                sys.executable,
                "-c",
                _REPL,
                "repl",
                "--no-standby",
                "--cwd",
                str(tmp_path),
            ]
        )
        pane.wait_for_text("In [1]:", timeout=60)
        pane.send("-l", _DEAF_CELL)
        pane.send("Enter")
        pane.wait_for_text("In [2]:", timeout=30)
        workers = _workers(pane)
        assert len(workers) == 1, workers
        pane.send("-l", "keep_")
        pane.send("Tab")
        # Well inside the bound: the prompt still takes keys.
        pane.send("-l", "abc")
        pane.wait_for_text("keep_abc", timeout=5)
        assert gone(workers[0], timeout=30), "the silent worker was never stopped"
        pane.send("C-c")
        screen = pane.wait_for(
            lambda text: "starting a fresh one" in text, "the REPL's recovery", timeout=30
        )
        assert "did not answer the completion request within 10s" in screen, screen
        assert "call restart()" not in screen, screen
        pane.wait_for(lambda text: text.rstrip().endswith("In [1]:"), "a fresh prompt")
        pane.send("print('fresh', 'keep_me' in globals())", "Enter")
        pane.wait_for_text("fresh False", timeout=30)
        pane.send("C-d")
    finally:
        pane.kill_server()


def _workers(pane):
    """Host pids of the REPL's worker processes (the Python worker script)."""
    found = []
    for pid in descendants(pane.program_pid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except OSError:
            continue
        # The worker itself, not the bubblewrap processes whose argv names it.
        if b"bwrap" not in argv[0] and any(a.endswith(b"kernel/worker.py") for a in argv):
            found.append(pid)
    return found
