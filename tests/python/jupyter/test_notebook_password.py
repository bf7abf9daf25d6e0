"""A getpass() prompt in the classic Notebook (headless Chromium): the page
shows a password box, as it does for ipykernel, because input_request says
`password` (xeus 2.4 said `pwd`, which the page ignores, and the secret was
shown as typed and then echoed into the output)."""

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from jupyter_support import KERNEL_NAME, REPO, descendants
from test_notebook_browser import (
    BROWSER_DIR,
    BROWSER_TIMEOUT,
    CHROMIUM,
    _free_port,
    _kernel_pids,
    _missing_reason,
    _stop,
    _wait_until_answering,
)

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
    token = secrets.token_hex(16)
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}/"
    jupyter_home = Path(tempfile.mkdtemp(prefix="o4s-notebook-"))
    env = environment.environ()
    env["JUPYTER_CONFIG_DIR"] = str(jupyter_home / "config")
    env["JUPYTER_RUNTIME_DIR"] = str(jupyter_home / "runtime")
    log_path = jupyter_home / "notebook.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "notebook",
                "--no-browser",
                "--allow-root",
                "--ip=127.0.0.1",
                f"--port={port}",
                "--port-retries=0",
                f"--NotebookApp.token={token}",
                f"--notebook-dir={environment.workspace}",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    kernel_pids = []
    try:
        _wait_until_answering(server, base_url, token, log_path)
        browser = subprocess.run(
            ["node", str(SCRIPT), f"{base_url}notebooks/{notebook}?token={token}", "hunter2-typed"],
            capture_output=True,
            text=True,
            timeout=BROWSER_TIMEOUT + 30,
            env={
                **os.environ,
                "CHROMIUM": CHROMIUM,
                "NOTEBOOK_TIMEOUT_MS": str(BROWSER_TIMEOUT * 1000),
            },
            cwd=BROWSER_DIR,
        )
        kernel_pids = _kernel_pids(server.pid)
        assert browser.returncode == 0, f"{browser.stderr}\n{log_path.read_text()}"
        result = json.loads(browser.stdout)
        assert result["inputType"] == "password", result
        shown = "\n".join(result["outputs"])
        assert "13 depyt-2retnuh" in shown, result
        assert "hunter2-typed" not in shown, result
    finally:
        left = _stop(server, kernel_pids + descendants(server.pid))
        shutil.rmtree(jupyter_home, ignore_errors=True)
    assert not left, f"processes left after the notebook server stopped: {left}"
