"""Host RPC per call: one cell makes N synchronous calls into the host.

openai4s: `host._call('ping', [])`, answered by a dispatcher returning
"pong". Jupyter's analog is `input()`, answered over the stdin channel. The
sample is the cell's time to result divided by N.
"""

import time

from bench.rows import TIME, Row, Target
from bench.systems import KERNEL_SYSTEMS

NAME = "host_rpc"
SYSTEMS = KERNEL_SYSTEMS

_CALL = {"openai4s": "host._call('ping', [])", "jupyter": "input()"}


def rows(profile):
    return (
        Row(
            "host_rpc",
            f"host RPC per call ({profile.rpc_calls:,} in a cell)",
            TIME,
            (Target(0.02, "host_rpc", "jupyter"),),
        ),
    )


def cell(system, calls):
    return f"for _ in range({calls}):\n    _r = {_CALL[system]}\nassert _r == 'pong', _r\n"


def measure(ctx, system):
    session = ctx.warm(system)
    calls = ctx.profile.rpc_calls
    started = time.perf_counter()
    result = session.execute(cell(system, calls), stdin_reply="pong")
    elapsed = time.perf_counter() - started
    if result.error:
        raise RuntimeError(f"host RPC cell failed: {result.error}")
    return {"host_rpc": [elapsed / calls]}
