"""What the side-by-side scripts (`bench.r_kernel`, `bench.jupyter_kernel`)
share: the median/p90 of a time series (bench.stats' rule), seconds as
text, the machine line, and the JSON report under bench/results/."""

import json
import os
import time
from datetime import datetime, timezone

from bench.rows import TIME
from bench.stats import summarize


class ApiKernel:
    """A kernel of our own Python API as one system of a side-by-side run:
    `spawn(cwd)` starts it (a Python `Kernel`, an R kernel, ...)."""

    def __init__(self, name, spawn):
        self.name = name
        self._spawn = spawn
        self.kernel = None

    def start(self, cwd):
        self.kernel = self._spawn(cwd)

    def run(self, code):
        result = self.kernel.execute(code)
        if result["error"]:
            raise RuntimeError(result["error"])
        return result["stdout"]

    def stop(self):
        self.kernel.shutdown()

    def close(self):
        pass


def median_p90(seconds):
    summary = summarize(TIME, seconds)
    return summary["median"], summary["p90"]


def format_seconds(seconds):
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def machine_line(load_before, load_after, elapsed_s):
    return (
        f"{os.cpu_count()} cores, load {' '.join(f'{v:.2f}' for v in load_before)} -> "
        f"{' '.join(f'{v:.2f}' for v in load_after)}, {elapsed_s:.0f} s"
    )


def write_report(prefix, report):
    """Writes `report` to bench/results/<prefix>-<UTC stamp>.json; returns the path."""
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(out_dir, f"{prefix}-{stamp}.json")
    with open(path, "w", encoding="utf-8") as out:
        json.dump(report, out, indent=2)
    return path


def cold_start(system, cwd, cell, expect=None):
    """Seconds from `system.start` to the answer of its first cell (the
    system is stopped after); `expect` must be in that answer when given."""
    began = time.perf_counter()
    system.start(cwd)
    try:
        out = system.run(cell)
        elapsed = time.perf_counter() - began
    finally:
        system.stop()
    assert expect is None or expect in out, f"{system.name}: unexpected {cell} output {out!r}"
    return elapsed


def round_trips(system, cwd, cells, cell, warm):
    """Seconds of each of `cells` runs of `cell`, after `warm` untimed ones."""
    system.start(cwd)
    try:
        for _ in range(warm):
            system.run(cell)
        times = []
        for _ in range(cells):
            began = time.perf_counter()
            system.run(cell)
            times.append(time.perf_counter() - began)
    finally:
        system.stop()
    return times
