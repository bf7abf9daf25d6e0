"""host.request_network_access in a real terminal (tmux): the REPL's
approval prompt asks the person, and the answer decides (issue 30 part 3)."""

import shutil
import sys

import pytest

from repl_support import TmuxPane

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


@pytest.fixture
def pane(tmp_path):
    pane = TmuxPane(tmp_path)
    pane.start(
        ["env", f"HOME={tmp_path}", f"OPENAI4S_DATA_DIR={tmp_path / 'data'}"]
        + [sys.executable, "-m", "openai4s", "repl"]
    )
    pane.wait_for_text("In [1]:")
    yield pane
    pane.kill_server()


def test_yes_grants_and_no_refuses(pane):
    pane.send("host.request_network_access('granted.test', reason='a dataset')", "Enter")
    screen = pane.wait_for(lambda text: "Allow? [y]es once" in text, "the approval prompt")
    assert "'request_network_access'" in screen and "    | granted.test" in screen
    assert "The cell's reason (its own words, not checked):\n    | a dataset\n" in screen
    pane.send("y", "Enter")
    pane.wait_for_text("'granted': True")
    pane.send("host.request_network_access('refused.test')", "Enter")
    pane.wait_for(lambda text: text.count("Allow? [y]es once") == 2, "the second prompt")
    pane.send("n", "Enter")
    pane.wait_for_text("denied by user")
    # The first grant stands for the session: asked again, nobody is prompted.
    pane.send("host.request_network_access('granted.test')['asked']", "Enter")
    pane.wait_for(lambda text: "['asked']\nFalse\n" in text, "the answer, asked False")
    assert pane.text().count("Allow? [y]es once") == 2
