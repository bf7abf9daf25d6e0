"""Reaching a real worker's protocol pipe from a test: its host pid (inside
bubblewrap or not) and a reader of its input pipe that shows the bytes
waiting there without reading them. The early-interrupt tests (Python and
R) stop a worker while a cell and its interrupt are sent."""

import fcntl
import os
import signal
import termios
import threading
import time


def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


def worker_pid(kernel, script=b"worker.py"):
    """The worker's host pid: the spawned process, or inside bubblewrap."""
    pending = [kernel.pid]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            if not argv[0].endswith(b"bwrap") and any(a.endswith(script) for a in argv):
                return pid
        except OSError:
            pass
        pending += children(pid)
    raise AssertionError("no worker process under the kernel")


def protocol_input(pid, fd=None):
    """A reader of the worker's protocol pipe, to see bytes waiting in it
    (never read): its descriptor `fd` (the R worker's is 4), else the pipe
    whose read end the worker holds twice (the Python worker's stream and
    its reserve; no other pipe's read end is held twice)."""
    if fd is not None:
        return os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
    seen = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                fields = dict(line.split(":", 1) for line in info if ":" in line)
            flags = int(fields["flags"].strip(), 8)
        except (OSError, ValueError, KeyError):
            continue
        if target.startswith("pipe:") and flags & os.O_ACCMODE == os.O_RDONLY:
            seen.setdefault(target, []).append(fd)
    doubled = [fds[0] for fds in seen.values() if len(fds) >= 2]
    assert len(doubled) == 1, seen
    return os.open(f"/proc/{pid}/fd/{doubled[0]}", os.O_RDONLY | os.O_NONBLOCK)


def waiting_bytes(fd):
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")


def run_interrupted_while_stopped(kernel, code, worker, fd=None):
    """Runs `code` on `kernel` and interrupts it while `worker` is stopped
    (SIGSTOP): the cell and the interrupt both reach the worker before it
    runs again, so its SIGINT lands before the cell starts. The result, once
    the cell ended (AssertionError if it ran on past the interrupt)."""
    pipe = protocol_input(worker, fd)
    result = {}
    os.kill(worker, signal.SIGSTOP)
    try:
        runner = threading.Thread(target=lambda: result.update(kernel.execute(code)))
        runner.start()
        deadline = time.monotonic() + 30
        while waiting_bytes(pipe) == 0:
            assert time.monotonic() < deadline, "the cell never reached the worker's pipe"
            time.sleep(0.005)
        kernel.interrupt()
    finally:
        os.kill(worker, signal.SIGCONT)
        os.close(pipe)
    runner.join(timeout=20)
    assert not runner.is_alive(), "the interrupt was lost: the cell ran on"
    return result
