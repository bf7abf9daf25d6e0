"""Plain Python, the physical limit: a bare interpreter start, a raw pipe
round trip, and code run in a fresh `python -I` (the file-loop baseline).

It uses the interpreter the bench runs on, which is also the one the
openai4s worker runs on (Kernel's default python is sys.executable).
"""

import os
import subprocess
import sys
import time

ECHO_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "echo_child.py")


def bare_start_seconds():
    """Wall time of `python -I -c pass`, spawn to reaped exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
    return time.perf_counter() - started


def run_code(code, cwd, timeout=120.0):
    """stdout of `code` run in a fresh isolated interpreter."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", code],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.stdout


class EchoChild:
    """A tiny child that echoes its stdin; one round trip = write + read back."""

    def __init__(self):
        self._proc = subprocess.Popen(
            [sys.executable, "-I", ECHO_CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self._to_child = self._proc.stdin.fileno()
        self._from_child = self._proc.stdout.fileno()

    def round_trip_seconds(self, payload=b"ping\n"):
        started = time.perf_counter()
        os.write(self._to_child, payload)
        received = 0
        while received < len(payload):
            chunk = os.read(self._from_child, 65536)
            if not chunk:
                raise RuntimeError("echo child exited")
            received += len(chunk)
        return time.perf_counter() - started

    def close(self):
        try:
            self._proc.stdin.close()
            self._proc.wait(5)
        except Exception:
            self._proc.kill()
            self._proc.wait(5)
        finally:
            self._proc.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
