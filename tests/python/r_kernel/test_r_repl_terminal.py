"""`openai4s repl --lang r` in a real terminal (tmux): the banner says R, Tab
completes through R's own completion, and a plot is saved once."""

import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from repl_support import TmuxPane  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_tab_completes_and_a_plot_is_one_file(tmp_path, workspace):
    pane = TmuxPane(tmp_path)
    try:
        pane.start(
            [
                "env",
                f"HOME={tmp_path}",
                "OPENAI4S_KERNEL_SANDBOX=off",
                sys.executable,
                "-m",
                "openai4s",
                "repl",
                "--lang",
                "r",
                "--cwd",
                str(workspace),
            ]
        )
        banner = pane.wait_for_text("In [1]:", timeout=120)
        assert "R kernel" in banner and "Python" not in banner
        pane.send("my_long_variable <- 41", "Enter")
        pane.wait_for_text("In [2]:", timeout=60)

        # A unique match is inserted whole; the line then runs as typed.
        pane.send("my_lo", "Tab")
        pane.wait_for_text("In [2]: my_long_variable", timeout=30)
        pane.send(" + 1", "Enter")
        pane.wait_for(lambda text: re.search(r"\[1\] 42\n", text), "[1] 42", timeout=60)
        pane.wait_for_text("In [3]:", timeout=30)

        pane.send("plot(1:3)", "Enter")
        pane.wait_for_text("[figure: ", timeout=60)
        pane.wait_for_text("In [4]:", timeout=30)
        pngs = sorted(p.name for p in workspace.rglob("*.png"))
        assert pngs == ["figure-1.png"]
        pane.send("C-d")
    finally:
        pane.kill_server()
