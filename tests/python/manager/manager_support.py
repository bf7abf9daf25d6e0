"""Helpers for the manager tests: scripted fake workers and process probes."""

import os
import sys
from pathlib import Path

from openai4s.kernel.transport import PipeTransport

FAKE_WORKERS = Path(__file__).with_name("fake_workers")


def fake_worker_factory(script, *args):
    """A transport factory running one of the scripted fake workers, so the
    manager's reader can be fed what a real worker never sends."""
    command = [sys.executable, str(FAKE_WORKERS / script), *args]

    def factory():
        return PipeTransport(command, cwd=None, env=dict(os.environ))

    return factory


def process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
    return True


def pids_with_marker(marker):
    """Host pids of live processes whose command line contains `marker`:
    robust to a sandbox's PID namespace, where a cell's pids are local."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if marker.encode() in cmdline and process_exists(int(entry)):
            found.append(int(entry))
    return found
