"""Helpers for the web tests: the local server and a cell that calls host.*."""

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

SERVER = Path(__file__).with_name("web_server.py")


class LocalServer:
    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True
        )
        self.port = int(self.process.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}"

    def hits(self):
        with urllib.request.urlopen(self.url + "/hits", timeout=10) as reply:
            lines = reply.read().decode().splitlines()
        return {path: int(count) for path, count in (line.split() for line in lines)}

    def stop(self):
        self.process.kill()
        self.process.wait()


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


def web_rows(dispatcher):
    return dispatcher.store._conn.execute(
        "SELECT method, ok, summary, decided_by, outcome FROM host_call_log"
        " WHERE method IN ('web_fetch', 'web_download', 'request_network_access')"
        " ORDER BY created_at"
    ).fetchall()
