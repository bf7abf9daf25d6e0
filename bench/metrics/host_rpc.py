"""Host RPC per call: one cell makes N synchronous calls into the host.

openai4s: `host._call('ping', [])`, answered by a dispatcher returning
"pong". Jupyter's analog is `input()`, answered over the stdin channel. The
sample is the cell's time to result divided by N.

A second openai4s row times the stock dispatcher (`build_dispatcher`, the
C++ method table, permission gate and audit row): `host.capabilities()`,
whose calls stay in C++ on the host side. Each call writes one audit row to
SQLite, which this row includes; the first row is the round trip alone.
"""

import time
from pathlib import Path

from bench.rows import TIME, Row, Target
from bench.systems import KERNEL_SYSTEMS

NAME = "host_rpc"
SYSTEMS = KERNEL_SYSTEMS

_CALL = {"openai4s": "host._call('ping', [])", "jupyter": "input()"}
_STOCK_CALL = "host.capabilities()['bash']"


def rows(profile):
    return (
        Row(
            "host_rpc",
            f"host RPC per call ({profile.rpc_calls:,} in a cell)",
            TIME,
            (Target(0.02, "host_rpc", "jupyter"),),
        ),
        Row(
            "host_rpc_stock",
            f"host RPC per call, stock dispatcher, audited ({profile.rpc_calls:,} in a cell)",
            TIME,
            (Target(1.0, "host_rpc", "jupyter", informative=True),),
        ),
    )


def cell(system, calls, call=None):
    expected = "True" if call == _STOCK_CALL else "'pong'"
    return (
        f"for _ in range({calls}):\n    _r = {call or _CALL[system]}\n"
        f"assert _r == {expected}, _r\n"
    )


def measure(ctx, system):
    session = ctx.warm(system)
    calls = ctx.profile.rpc_calls
    started = time.perf_counter()
    result = session.execute(cell(system, calls), stdin_reply="pong")
    elapsed = time.perf_counter() - started
    if result.error:
        raise RuntimeError(f"host RPC cell failed: {result.error}")
    found = {"host_rpc": [elapsed / calls]}
    if system == "openai4s":
        found["host_rpc_stock"] = [_stock_per_call(ctx, calls)]
    return found


def _stock_per_call(ctx, calls):
    from openai4s.config import Config, LLMConfig
    from openai4s.host_dispatch import build_dispatcher
    from openai4s.kernel import Kernel

    data = Path(ctx.workspace) / "stock-data"
    cfg = Config(data_dir=data, llm=LLMConfig(provider="deepseek", api_key="bench"))
    dispatcher = build_dispatcher(cfg, workspace=ctx.cell_cwd)
    with Kernel(dispatcher=dispatcher, cwd=ctx.cell_cwd) as kernel:
        kernel.execute(cell("openai4s", 3, _STOCK_CALL))
        started = time.perf_counter()
        result = kernel.execute(cell("openai4s", calls, _STOCK_CALL))
        elapsed = time.perf_counter() - started
    dispatcher.store.close()
    if result["error"]:
        raise RuntimeError(f"stock host RPC cell failed: {result['error']}")
    return elapsed / calls
