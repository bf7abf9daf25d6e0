"""The classic Jupyter Notebook (Debian's `jupyter-notebook`) in headless
Chromium (Debian's `chromium`, driven by playwright-core from npm): a
notebook on the openai4s kernel runs a matplotlib cell and the PNG is in the
page. The screenshot is kept as a test artifact (`$OPENAI4S_TEST_ARTIFACTS`,
else `tests/artifacts/`), named notebook-plot.png."""

import base64
import json
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from jupyter_support import (
    KERNEL_BINARY,
    KERNEL_NAME,
    REPO,
    alive,
    descendants,
    kernel_missing_reason,
)

nbformat = pytest.importorskip("nbformat")

BROWSER_DIR = REPO / "tests" / "browser"
SCRIPT = BROWSER_DIR / "notebook_plot.mjs"
PLAYWRIGHT = BROWSER_DIR / "node_modules" / "playwright-core"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Each bound is generous: the machine is shared and the first kernel start
# imports matplotlib; a healthy run takes a few seconds per step.
SERVER_START_TIMEOUT = 30
BROWSER_TIMEOUT = 40
PLOT_CELL = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"


def _missing_reason():
    reason = kernel_missing_reason()
    if reason:
        return reason
    if not os.access(CHROMIUM, os.X_OK):
        return "chromium is not installed (Debian package `chromium`; run make setup)"
    if not shutil.which("node"):
        return "node is not installed (Debian package `nodejs`)"
    if not PLAYWRIGHT.is_dir():
        message = (
            "tests/browser/node_modules/playwright-core is missing (scripts/setup.sh runs npm ci)"
        )
        if os.environ.get("CI") == "true":
            # Setup installs it under CI, so its absence is a broken setup.
            pytest.fail(message)
        return message
    if subprocess.run([sys.executable, "-c", "import notebook"], capture_output=True).returncode:
        return "the classic notebook is not installed (Debian package `jupyter-notebook`)"
    return None


def _artifact_dir():
    path = Path(os.environ.get("OPENAI4S_TEST_ARTIFACTS") or REPO / "tests" / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_notebook(workspace):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(PLOT_CELL)]
    nb.metadata["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": "openai4s",
        "language": "python",
    }
    nbformat.write(nb, str(workspace / "plot.ipynb"))
    return "plot.ipynb"


def _display_name(environment):
    spec = environment.prefix / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json"
    return json.loads(spec.read_text())["display_name"]


def _wait_until_answering(server, base_url, token, log_path):
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"jupyter notebook exited {server.returncode}:\n{log_path.read_text()}")
        try:
            with urllib.request.urlopen(f"{base_url}api/status?token={token}", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    pytest.fail(
        f"jupyter notebook did not answer within {SERVER_START_TIMEOUT} s:\n{log_path.read_text()}"
    )


def _kernel_pids(server_pid):
    pids = []
    for pid in descendants(server_pid):
        # argv[0], not /proc/PID/exe: the binary may be relinked meanwhile.
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv0 = handle.read().split(b"\0", 1)[0].decode(errors="replace")
        except OSError:
            continue
        if Path(argv0).name == KERNEL_BINARY.name:
            pids.append(pid)
    return pids


def _stop(server, pids):
    """SIGTERM the server (it shuts its kernels down), then report every pid
    of this test still alive; stragglers are killed so nothing leaks."""
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


def run_in_chromium(environment, notebook, script, argument):
    """Serve the workspace with the classic Notebook, run `node script URL
    argument` (a playwright-core page driver), stop the server, and return
    (the driver's JSON result, the openai4s kernel pids the server started).
    Fails when the driver fails or a process of the test outlives the server."""
    token = secrets.token_hex(16)
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}/"
    env = environment.environ()
    # The server's config and runtime files stay in this test's temp dir.
    jupyter_home = Path(tempfile.mkdtemp(prefix="o4s-notebook-"))
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
            ["node", str(script), f"{base_url}notebooks/{notebook}?token={token}", argument],
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
        assert browser.returncode == 0, (
            f"browser run failed ({browser.returncode}):\n{browser.stderr}\n"
            f"notebook server log:\n{log_path.read_text()}"
        )
        result = json.loads(browser.stdout)
    finally:
        left = _stop(server, kernel_pids + descendants(server.pid))
        shutil.rmtree(jupyter_home, ignore_errors=True)
    assert not left, f"processes left after the notebook server stopped: {left}"
    return result, kernel_pids


def test_classic_notebook_in_chromium_shows_the_plot(environment):
    reason = _missing_reason()
    if reason:
        pytest.skip(reason)
    notebook = _write_notebook(environment.workspace)
    screenshot = _artifact_dir() / "notebook-plot.png"
    screenshot.unlink(missing_ok=True)
    result, kernel_pids = run_in_chromium(environment, notebook, SCRIPT, str(screenshot))
    assert result["images"] >= 1, result
    assert result["width"] > 0 and result["height"] > 0, result
    png = base64.b64decode(result.pop("png"))
    assert png.startswith(PNG_MAGIC), png[:16]
    # The IHDR chunk (right after the magic) holds the pixel size.
    assert struct.unpack(">II", png[16:24]) == (result["width"], result["height"]), result
    assert result["kernelName"] == KERNEL_NAME, result
    assert result["kernel"] == _display_name(environment), result
    assert kernel_pids, "no openai4s-jupyter-kernel process was started by the server"
    data = screenshot.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000, f"{screenshot} is not a PNG screenshot"
