"""An R cell interrupted while it is on its way stops even when the one
SIGINT lands before the cell starts (the worker idle, reading the cell):
the host's `interrupt` frame, written before the signal, names the cell,
and the R worker looks for it when it swallowed a signal between requests.
Made deterministic by stopping the worker while the cell and the interrupt
are sent, as the Python worker's test does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "manager"))
from worker_pipes import run_interrupted_while_stopped, worker_pid  # noqa: E402

SLEEPER = "Sys.sleep(30)\ncat('ran to its end')"


def test_an_r_cell_whose_interrupt_beats_it_still_stops(r_kernel):
    r = r_kernel
    assert r.execute("x <- 'kept'")["error"] is None
    worker = worker_pid(r, b"r_worker.R")
    result = run_interrupted_while_stopped(r, SLEEPER, worker, fd=4)
    assert result["interrupted"] is True, result
    assert "ran to its end" not in result["stdout"]
    assert r.execute("cat(x)")["stdout"] == "kept"
