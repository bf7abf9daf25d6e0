"""Host RPC per call through the stock dispatcher (`build_dispatcher`: the
C++ method table, permission gate, handler and audit row), whose calls stay
in C++ on the host side: one cell makes N `host.capabilities()` calls.

Each call writes one audit row to SQLite, which this row includes (the
`host_rpc` row is the round trip alone). The audit database goes on tmpfs
where there is one (/dev/shm), so the row is the call path and not the
disk's fsync (tens of ms a call on a busy VM).
"""

import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.rows import TIME, Row, Target

NAME = "host_rpc_stock"
SYSTEMS = ("openai4s",)

_CALL = "host.capabilities()['bash']"


def rows(profile):
    return (
        Row(
            "host_rpc_stock",
            f"host RPC per call, stock dispatcher, audited ({profile.rpc_calls:,} in a cell)",
            TIME,
            (Target(1.0, "host_rpc", "jupyter", informative=True),),
        ),
    )


def cell(calls):
    return f"for _ in range({calls}):\n    _r = {_CALL}\nassert _r is True, _r\n"


def measure(ctx, system):
    from openai4s.config import Config, LLMConfig
    from openai4s.host_dispatch import build_dispatcher
    from openai4s.kernel import Kernel

    calls = ctx.profile.rpc_calls
    memory = "/dev/shm" if os.path.isdir("/dev/shm") else None
    data = Path(tempfile.mkdtemp(prefix="o4s-bench-audit-", dir=memory or ctx.workspace))
    cfg = Config(data_dir=data, llm=LLMConfig(provider="deepseek", api_key="bench"))
    dispatcher = build_dispatcher(cfg, workspace=ctx.cell_cwd)
    try:
        with Kernel(dispatcher=dispatcher, cwd=ctx.cell_cwd) as kernel:
            kernel.execute(cell(3))
            started = time.perf_counter()
            result = kernel.execute(cell(calls))
            elapsed = time.perf_counter() - started
    finally:
        dispatcher.store.close()
        shutil.rmtree(data, ignore_errors=True)
    if result["error"]:
        raise RuntimeError(f"stock host RPC cell failed: {result['error']}")
    return {"host_rpc_stock": [elapsed / calls]}
