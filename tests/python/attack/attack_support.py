"""Helpers for the attack tests: a hostile local server, a cell that calls
host.*, and process checks by marker."""

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

# The host and sandbox tests' helpers serve these tests too.
_TESTS = Path(__file__).resolve().parent.parent
for _beside in ("host", "sandbox"):
    if str(_TESTS / _beside) not in sys.path:
        sys.path.insert(0, str(_TESTS / _beside))

from sandbox_support import pids_with_marker  # noqa: E402
from web_support import call  # noqa: E402

__all__ = ["HostileServer", "call", "make_dispatcher", "pids_with_marker", "wait_for"]

SERVER = Path(__file__).with_name("attack_server.py")


class HostileServer:
    """attack_server.py on `address` (127.0.0.1 or another loopback one)."""

    def __init__(self, address="127.0.0.1"):
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), address], stdout=subprocess.PIPE, text=True
        )
        self.port = int(self.process.stdout.readline())
        self.url = f"http://{address}:{self.port}"

    def hits(self):
        with urllib.request.urlopen(self.url + "/hits", timeout=10) as reply:
            lines = reply.read().decode().splitlines()
        return {path: int(count) for path, count in (line.split() for line in lines)}

    def visits(self):
        """The paths asked for, besides /hits itself."""
        return {path: n for path, n in self.hits().items() if path != "/hits"}

    def stop(self):
        self.process.kill()
        self.process.wait()


def make_dispatcher(data_dir, workspace):
    """A real dispatcher on a real store, with a fresh conversation frame."""
    from openai4s.config import Config, LLMConfig
    from openai4s.host_dispatch import build_dispatcher

    cfg = Config(data_dir=data_dir, llm=LLMConfig(provider="deepseek", api_key="x"))
    d = build_dispatcher(cfg, workspace=workspace)
    d.frame_id = d.store.new_frame(kind="turn")
    return d


def wait_for(condition, what, timeout=30):
    """Polls `condition` until it is truthy (a wait, not a measurement: the
    bound only keeps a broken run from hanging)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
