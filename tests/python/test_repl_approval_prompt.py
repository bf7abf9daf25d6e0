"""An approval prompt in a real terminal (tmux) cannot be made to lie: the
cell's control characters reach the screen as escapes, and a target too
long to show whole is cut visibly and may be approved only once
(issue 27, point 2). The pane's text is what a person would read."""

import shutil
import sys

import pytest

from repl_support import TmuxPane

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


@pytest.fixture
def pane(tmp_path):
    pane = TmuxPane(tmp_path)
    pane.start(["env", f"HOME={tmp_path}", sys.executable, "-m", "openai4s", "repl"])
    pane.wait_for_text("In [1]:")
    yield pane
    pane.kill_server()


def test_a_carriage_return_and_erase_line_cannot_hide_the_real_command(pane):
    # The cell builds the controls at run time, so the echoed source holds
    # none; only the prompt could carry them to the terminal.
    pane.send(
        "host.bash('rm -rf precious' + chr(13) + chr(27) + '[2K' + 'echo harmless')",
        "Enter",
    )
    screen = pane.wait_for(lambda text: "Allow? [y]es once" in text, "the approval prompt")
    # Old behaviour: CR + ESC[2K erased "rm -rf precious" and the line read
    # "echo harmless". Now the whole command is on screen, escaped.
    assert "    | rm -rf precious\\r\\x1b[2Kecho harmless" in screen
    pane.send("n", "Enter")
    pane.wait_for_text("denied by the user")
    pane.wait_for_text("In [2]:")


def test_a_cut_target_says_so_and_offers_only_once(pane):
    pane.send("r = host.bash('echo ' + 'x' * 5000 + ' && echo done')", "Enter")
    screen = pane.wait_for(lambda text: "bytes shown; sha256 " in text, "the cut mark")
    assert "of 5018 bytes shown; sha256 " in screen
    assert "[a]lways" not in screen
    # "a" is not an answer here: it denies.
    pane.send("a", "Enter")
    pane.wait_for_text("denied by the user")
    pane.wait_for_text("In [2]:")


def _attributes_of_line(pane, needle):
    """The line holding `needle` as tmux holds it, with its SGR attributes."""
    text = pane.tmux("capture-pane", "-p", "-e", "-J", "-S", "-500", "-t", "repl")
    return next(line for line in text.splitlines() if needle in line)


def test_terminal_state_left_by_the_cell_cannot_hide_the_prompt(pane):
    # Concealed black-on-black text, switched on by the cell's own output
    # just before it asks: the prompt would be there but unreadable.
    pane.send(
        "import sys; print(chr(27) + '[8;30;40m', end=''); sys.stdout.flush(); "
        "host.bash('rm -rf precious')",
        "Enter",
    )
    pane.wait_for(lambda text: "Allow? [y]es once" in text, "the approval prompt")
    # tmux writes a cell's attributes as SGR codes: a plain line has none.
    line = _attributes_of_line(pane, "    | rm -rf precious")
    assert "\x1b[" not in line, repr(line)
    pane.send("n", "Enter")
    pane.wait_for_text("denied by the user")
