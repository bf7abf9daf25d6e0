"""An interrupt pressed while a cell is on its way stops that cell even when
its one SIGINT lands before the cell's code starts (the worker idle, or
reading the cell): the host names the cell in an `interrupt` frame sent
before the signal, and the worker checks for it when it arms the cell.

Made deterministic by stopping the worker (SIGSTOP) while the cell and the
interrupt are sent: on SIGCONT the signal reaches an idle worker first."""

import threading
import time

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

from worker_pipes import run_interrupted_while_stopped, worker_pid

SLEEPER = "import time\ntime.sleep(30)\nprint('ran to its end')"


@pytest.fixture
def kernel(tmp_path, sandbox_mode):
    k = Kernel(cwd=str(tmp_path), sandbox=sandbox_for(str(tmp_path), mode=sandbox_mode))
    try:
        yield k
    finally:
        k.shutdown()


def test_an_interrupt_whose_signal_beats_the_cells_code_still_stops_it(kernel):
    assert kernel.execute("x = 'kept'")["error"] is None
    result = run_interrupted_while_stopped(kernel, SLEEPER, worker_pid(kernel))
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
