"""Review finding: interrupt() now writes an `interrupt` frame to the
worker's input before it sends SIGINT (kernel/cell_interrupts.h). A cell
that sends host calls and never reads the replies fills that pipe: the
host's reply write then blocks, holding the transport's write lock, and an
interrupt() that waits for the same lock never sends its signal. Ctrl-C is
the one way out of such a cell, so it must not depend on the pipe.

The replies are large and the calls few, so the host blocks on a full
input pipe while all the cell's calls still fit in its output pipe: the
cell itself is not blocked, only the host."""

import threading
import time

import pytest

from openai4s.kernel import Kernel

FLOOD = (
    "import json, sys, time\n"
    "out = sys._openai4s_protocol_stdout\n"
    "line = json.dumps({'type': 'host_call', 'id': 'flood', 'method': 'ping', 'args': []})\n"
    "for _ in range(200):\n"
    "    out.write(line + '\\n')\n"
    "out.flush()\n"
    "time.sleep(120)\n"
    "print('ran to its end')"
)


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(dispatcher=lambda method, args: "x" * 4000, cwd=tmp_path)
    try:
        yield k
    finally:
        k.shutdown()


def test_an_interrupt_reaches_a_cell_that_does_not_read_its_replies(kernel):
    box = {}
    runner = threading.Thread(target=lambda: box.update(r=kernel.execute(FLOOD)))
    runner.start()
    # Long enough for the host to fill the worker's input with replies
    # (about 16 of the 200 fit) and block on the next one.
    time.sleep(3)
    interrupter = threading.Thread(target=lambda: box.update(i=kernel.interrupt()))
    interrupter.start()
    interrupter.join(30)
    try:
        assert not interrupter.is_alive(), "interrupt() blocked on the full pipe"
        runner.join(60)
        assert not runner.is_alive()
        assert box["r"]["interrupted"] is True, box["r"]
        assert "ran to its end" not in box["r"]["stdout"]
        assert kernel.execute("print('next')")["stdout"] == "next\n"
    finally:
        if interrupter.is_alive() or runner.is_alive():
            kernel.kill_worker()
            interrupter.join(30)
            runner.join(30)


# Many more calls than the worker's output pipe holds: before, the host
# blocked writing replies while the cell blocked writing calls, and neither
# an interrupt nor anything else could end the cell.
DEADLOCK = FLOOD.replace("range(200)", "range(5000)")


def test_a_cell_flooding_host_calls_cannot_deadlock_its_kernel(kernel):
    box = {}
    runner = threading.Thread(target=lambda: box.update(r=kernel.execute(DEADLOCK)))
    runner.start()
    time.sleep(3)
    kernel.interrupt()
    runner.join(60)
    try:
        assert not runner.is_alive(), "the host and the cell blocked each other"
        assert box["r"]["interrupted"] is True, box["r"]
        assert kernel.execute("print('next')")["stdout"] == "next\n"
    finally:
        if runner.is_alive():
            kernel.kill_worker()
            runner.join(30)
