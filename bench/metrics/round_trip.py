"""Warm-kernel round trips of trivial cells: `pass`, `x = 1`, one print."""

import time

from bench.rows import TIME, Row, Target
from bench.systems import KERNEL_SYSTEMS, SANDBOXED

NAME = "round_trip"
SYSTEMS = KERNEL_SYSTEMS + (SANDBOXED,)

# row key -> (cell, the stdout it must produce)
_CELLS = {
    "pass_rt": ("pass", ""),
    "assign_rt": ("x = 1", ""),
    "print_rt": ("print('hello')", "hello\n"),
}


def rows(profile):
    return (
        Row("pass_rt", "`pass` round trip", TIME, (Target(0.03, "pass_rt", "jupyter"),)),
        Row("assign_rt", "`x = 1` round trip", TIME),
        Row("print_rt", "one-line print round trip", TIME),
    )


def measure(ctx, system):
    session = ctx.warm(system)
    samples = {}
    for key, (code, expected) in _CELLS.items():
        times = []
        for _ in range(ctx.profile.round_trips):
            started = time.perf_counter()
            result = session.execute(code)
            times.append(time.perf_counter() - started)
            if result.error or result.stdout != expected:
                raise RuntimeError(f"{code!r} gave {result.stdout!r}, error {result.error!r}")
        samples[key] = times
    return samples
