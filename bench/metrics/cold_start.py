"""Cold start: construct a kernel and get the result of `1+1`.

Before a system's first sample its client library is imported and one
untimed kernel is started: the metric is a cold kernel, not a cold host.
"""

import time

from bench import systems
from bench.rows import TIME, Row, Target

NAME = "cold_start"
SYSTEMS = systems.KERNEL_SYSTEMS + (systems.SANDBOXED,)


def rows(profile):
    return (
        Row(
            "cold_start",
            "cold start (construct -> `1+1`)",
            TIME,
            (
                Target(0.08, "cold_start", "jupyter"),
                Target(4.0, "bare_start", "plain"),
            ),
        ),
    )


def warm_up(ctx, system):
    systems.preload(system)
    _one(ctx, system)


def _one(ctx, system):
    started = time.perf_counter()
    session = systems.start(system, ctx.cell_cwd)
    try:
        result = session.execute("1+1")
        elapsed = time.perf_counter() - started
    finally:
        session.close()
    if result.error or "2" not in result.stdout:
        raise RuntimeError(f"`1+1` gave {result.stdout!r}, error {result.error!r}")
    return elapsed


def measure(ctx, system):
    return {"cold_start": [_one(ctx, system) for _ in range(ctx.profile.cold_starts)]}
