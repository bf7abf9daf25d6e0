"""Run one shell command in its own session with bounded output tails."""

import codecs
import os
import shutil
import signal
import subprocess
import threading
import time

STDOUT_TAIL_CHARS = 30_000
STDERR_TAIL_CHARS = 8_000
GRACE_S = 5.0
POLL_S = 0.05


class _Tail:
    """Drains one pipe, keeping the last ``limit`` characters."""

    def __init__(self, limit):
        self.limit = limit
        self.seen = 0
        self._text = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data, final=False):
        text = self._decoder.decode(data, final)
        self.seen += len(text)
        self._text += text
        # Trimmed in batches: bounded at twice the limit, amortised O(n).
        if len(self._text) > 2 * self.limit:
            self._text = self._text[-self.limit :]

    @property
    def text(self):
        return self._text[-self.limit :]

    def drain(self, fd):
        try:
            while True:
                data = os.read(fd, 65536)
                if not data:
                    break
                self.feed(data)
        except OSError:
            pass
        finally:
            self.feed(b"", final=True)
            os.close(fd)


class Outcome:
    def __init__(self, status, exit_code, duration_ms, tails=None, launch_error=None):
        self.status = status
        self.exit_code = exit_code
        self.duration_ms = duration_ms
        self.launch_error = launch_error
        self._tails = tails or {"stdout": _Tail(1), "stderr": _Tail(1)}

    def streams(self):
        fields = {name: tail.text for name, tail in self._tails.items()}
        for name, tail in self._tails.items():
            retained = len(tail.text)
            dropped = max(0, tail.seen - retained)
            fields[f"{name}_seen_chars"] = tail.seen
            fields[f"{name}_retained_chars"] = retained
            fields[f"{name}_dropped_chars"] = dropped
            fields[f"{name}_truncated"] = dropped > 0
        return fields


def _shell():
    return shutil.which("bash") or "/bin/sh"


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # kill(0) also succeeds for zombies nobody reaps (a container whose init
    # does not reap orphans), which would hold the wait to its deadline.
    try:
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != b"Z":
                return True
        return False
    except OSError:
        return True


def _signal_group(pgid, signum):
    try:
        os.killpg(pgid, signum)
    except OSError:
        pass


def _wait_done(proc, readers, pgid, deadline):
    """True when leader, pipes and group all finish before ``deadline``.

    The deadline covers the whole group: a leader that exits early while a
    background child still runs (or holds the pipes) does not end the wait.
    """
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    for reader in readers:
        reader.join(timeout=max(0.0, deadline - time.monotonic()))
        if reader.is_alive():
            return False
    while _group_alive(pgid):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(POLL_S, remaining))
    return True


def run_shell(command, *, cwd, timeout):
    started = time.monotonic()
    tails = {"stdout": _Tail(STDOUT_TAIL_CHARS), "stderr": _Tail(STDERR_TAIL_CHARS)}
    try:
        proc = subprocess.Popen(
            [_shell(), "-c", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        elapsed = int((time.monotonic() - started) * 1000)
        return Outcome("launch_failed", None, elapsed, tails, launch_error=exc)
    pgid = proc.pid  # the leader of its own session
    readers = []
    for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        fd = os.dup(pipe.fileno())
        pipe.close()
        reader = threading.Thread(target=tails[name].drain, args=(fd,), daemon=True)
        reader.start()
        readers.append(reader)
    finished = False
    try:
        finished = _wait_done(proc, readers, pgid, started + timeout)
        if not finished:
            _signal_group(pgid, signal.SIGTERM)
            if not _wait_done(proc, readers, pgid, time.monotonic() + GRACE_S):
                _signal_group(pgid, signal.SIGKILL)
                _wait_done(proc, readers, pgid, time.monotonic() + GRACE_S)
    finally:
        if proc.poll() is None or not finished:
            # Interrupted or timed out: nothing the command started survives.
            _signal_group(pgid, signal.SIGKILL)
        try:
            proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        for reader in readers:
            reader.join(timeout=1.0)
    elapsed = int((time.monotonic() - started) * 1000)
    status = "completed" if finished else "timed_out"
    return Outcome(status, proc.returncode, elapsed, tails)
