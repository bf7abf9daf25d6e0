"""Helpers for the attack tests: a hostile local server, a cell that calls
host.*, and process checks by marker."""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

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


def call(kernel, expression):
    """(result, None) or (None, the RuntimeError's text) of host.<expression>."""
    code = (
        "import json\n"
        "try:\n"
        f"    print(json.dumps(host.{expression}))\n"
        "except RuntimeError as e:\n"
        "    print('ERROR: ' + str(e))\n"
    )
    out = kernel.execute(code)
    assert out["error"] is None, out["error"]
    text = out["stdout"].strip()
    if text.startswith("ERROR: "):
        return None, text[len("ERROR: ") :]
    return json.loads(text), None


def pids_with_marker(marker):
    """Live processes whose command line holds `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


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
