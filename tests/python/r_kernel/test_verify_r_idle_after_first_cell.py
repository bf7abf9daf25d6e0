"""An independent check that the second R cell does not wait on work the
worker does after the first: once the first cell's answer is out, an idle R
worker uses no CPU (the old worker byte-compiled its own functions right
then, 0.3-0.9 s of CPU that the second cell waited behind). Counted in CPU
ticks of the worker process, not in wall time, so a busy machine does not
change the answer."""

import time

import pytest

from openai4s.kernel.r_kernel import spawn_r_kernel
from openai4s.kernel.sandbox_status import sandbox_for

# 0.3 s of CPU at 100 ticks a second would be 30; an idle loop blocked in a
# read takes none. A few allow for the host's fence and the scheduler.
MAX_IDLE_TICKS = 8


def _cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@pytest.mark.parametrize("first_cell", ["1 + 1", "x <- rnorm(5)"])
def test_an_r_worker_is_idle_once_it_answered_its_first_cell(workspace, first_cell):
    kernel = spawn_r_kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode="off"))
    try:
        result = kernel.execute(first_cell)
        assert result["error"] is None, result
        before = _cpu_ticks(kernel.pid)
        time.sleep(1.5)
        used = _cpu_ticks(kernel.pid) - before
        assert used <= MAX_IDLE_TICKS, f"the idle worker used {used} CPU ticks after cell 1"
        # And it is still the same, working worker.
        assert kernel.execute("cat('two')")["stdout"] == "two"
    finally:
        kernel.shutdown()
