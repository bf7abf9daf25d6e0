"""Interrupting a cell stops the host-side transfer it is waiting for
(issue 30): a download from a server that trickles bytes for minutes ends
when the kernel is interrupted, its partial file is removed, the cell gets
KeyboardInterrupt, and the kernel stays usable."""

import threading
import time

import pytest

from openai4s.kernel import Kernel

from web_support import LocalServer, web_rows


@pytest.fixture(scope="module")
def server():
    local = LocalServer()
    yield local
    local.stop()


@pytest.fixture
def kernel(dispatcher, workspace, monkeypatch):
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        yield k


def wait_for(condition, what, timeout=60):
    """A wait, not a measurement: the bound only keeps a broken run from hanging."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def partial_files(workspace):
    return [p for p in workspace.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize("method", ["web_download", "web_fetch"])
def test_an_interrupt_stops_the_transfer_and_leaves_no_file(
    kernel, dispatcher, workspace, server, method
):
    url = server.url + "/trickle"
    spec = (
        f"{url!r}, 'big.bin', timeout=600" if method == "web_download" else f"{url!r}, timeout=600"
    )
    seen = server.hits()
    outcome = {}
    cell = threading.Thread(
        target=lambda: outcome.update(kernel.execute(f"host.{method}({spec})")), daemon=True
    )
    cell.start()
    # The transfer is under way (the download's temporary is filling).
    started = seen.get("/trickle", 0) + 1
    wait_for(lambda: server.hits().get("/trickle", 0) >= started, "the transfer to start")
    if method == "web_download":
        wait_for(lambda: any(p.stat().st_size for p in partial_files(workspace)), "bytes")
    kernel.interrupt()
    # Without the abort the host would keep the transfer (and the cell's
    # frame loop) for the server's ten minutes.
    cell.join(timeout=60)
    assert not cell.is_alive(), "the interrupt did not stop the transfer"
    assert outcome["interrupted"] is True, outcome
    left = seen.get("/trickle/left", 0) + 1
    wait_for(lambda: server.hits().get("/trickle/left", 0) >= left, "the server to see it leave")
    assert list(workspace.iterdir()) == []
    # The kernel is usable, and the transfer is on record as interrupted.
    assert kernel.execute("print(6 * 7)")["stdout"] == "42\n"
    rows = [row for row in web_rows(dispatcher) if row[0] == method]
    assert [row[1] for row in rows] == [0]
    # A next transfer of the same kernel is not stopped by the old interrupt.
    again = kernel.execute(f"print(host.web_fetch({server.url + '/data.csv'!r})['text'])")
    assert again["error"] is None and again["stdout"] == "a,b\n1,2\n\n"
