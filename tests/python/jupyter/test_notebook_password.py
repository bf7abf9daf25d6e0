"""A getpass() prompt in the classic Notebook (headless Chromium): the page
shows a password box, as it does for ipykernel, because input_request says
`password` (xeus 2.4 said `pwd`, which the page ignores, and the secret was
shown as typed and then echoed into the output)."""

import pytest

from jupyter_support import KERNEL_NAME, REPO
from test_notebook_browser import _missing_reason, run_in_chromium

nbformat = pytest.importorskip("nbformat")

SCRIPT = REPO / "tests" / "browser" / "notebook_password.mjs"


def _write_notebook(workspace):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import getpass\nsecret = getpass.getpass('Secret? ')"),
        nbformat.v4.new_code_cell("print(len(secret), secret[::-1])"),
    ]
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "openai4s"}
    nbformat.write(nb, str(workspace / "password.ipynb"))
    return "password.ipynb"


def test_getpass_shows_a_password_box_in_the_notebook(environment):
    reason = _missing_reason()
    if reason:
        pytest.skip(reason)
    notebook = _write_notebook(environment.workspace)
    result, _ = run_in_chromium(environment, notebook, SCRIPT, "hunter2-typed")
    assert result["inputType"] == "password", result
    shown = "\n".join(result["outputs"])
    assert "13 depyt-2retnuh" in shown, result
    assert "hunter2-typed" not in shown, result
