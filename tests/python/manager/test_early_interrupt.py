"""An interrupt pressed while a cell is on its way stops that cell even when
its one SIGINT lands before the cell's code starts (the worker idle, or
reading the cell): the host names the cell in an `interrupt` frame sent
before the signal, and the worker checks for it when it arms the cell.

Made deterministic by stopping the worker (SIGSTOP) while the cell and the
interrupt are sent: on SIGCONT the signal reaches an idle worker first."""

import fcntl
import os
import signal
import termios
import threading
import time

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

SLEEPER = "import time\ntime.sleep(30)\nprint('ran to its end')"


def _children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


def _worker_pid(kernel):
    """The worker's host pid: the spawned process, or inside bubblewrap."""
    pending = [kernel.pid]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            if not argv[0].endswith(b"bwrap") and any(a.endswith(b"worker.py") for a in argv):
                return pid
        except OSError:
            pass
        pending += _children(pid)
    raise AssertionError("no worker process under the kernel")


def _protocol_input(pid):
    """A reader of the worker's protocol pipe, to see bytes waiting in it
    (never read). The worker holds that pipe's read end twice (the stream
    and its reserve), and no other pipe's read end twice."""
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


def _waiting_bytes(fd):
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")


@pytest.fixture
def kernel(tmp_path, sandbox_mode):
    k = Kernel(cwd=str(tmp_path), sandbox=sandbox_for(str(tmp_path), mode=sandbox_mode))
    try:
        yield k
    finally:
        k.shutdown()


def test_an_interrupt_whose_signal_beats_the_cells_code_still_stops_it(kernel):
    assert kernel.execute("x = 'kept'")["error"] is None
    worker = _worker_pid(kernel)
    pipe = _protocol_input(worker)
    result = {}
    os.kill(worker, signal.SIGSTOP)
    try:
        runner = threading.Thread(target=lambda: result.update(kernel.execute(SLEEPER)))
        runner.start()
        deadline = time.monotonic() + 30
        while _waiting_bytes(pipe) == 0:
            assert time.monotonic() < deadline, "the cell never reached the worker's pipe"
            time.sleep(0.005)
        kernel.interrupt()
    finally:
        os.kill(worker, signal.SIGCONT)
        os.close(pipe)
    runner.join(timeout=20)
    assert not runner.is_alive(), "the interrupt was lost: the cell ran on"
    assert result["interrupted"] is True, result
    assert "ran to its end" not in result["stdout"]
    assert kernel.execute("print(x)")["stdout"] == "kept\n"


def test_an_idle_interrupt_stops_no_later_cell(kernel):
    kernel.interrupt()
    time.sleep(0.2)
    result = kernel.execute("print('after')")
    assert result["error"] is None and result["stdout"] == "after\n", result


def test_an_interrupt_for_a_finished_cell_stops_no_later_one(kernel):
    """The frame of an interrupt that came as its cell ended is read
    between cells, and must not stop the next."""
    runner = threading.Thread(target=lambda: kernel.execute("import time\ntime.sleep(0.3)"))
    runner.start()
    time.sleep(0.1)
    for _ in range(3):
        kernel.interrupt()
    runner.join(timeout=20)
    result = kernel.execute("print('next')")
    assert result["error"] is None and result["stdout"] == "next\n", result
