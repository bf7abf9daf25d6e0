"""The warm pool and the standby restart, side by side in one run (issue 28).

`python -m bench.warm_pool [--rounds N] [--sandbox MODE]` times, for the
Python API in the sandbox mode given (default: the environment's):

* start without the pool: `Kernel(cwd)` -> the result of `1+1`;
* pool claim: `KernelPool.claim()` -> the result of `1+1` on a full pool;
* burst: 20 claims at once (20 threads) on a full pool of 4, each to the
  result of its `1+1`, against a burst of 20 starts at once without the
  pool in the same run (the fair comparison: both share the CPU 20 ways);
* restart: `restart()` -> the result of `1+1`, with a ready standby and
  without one.

Rounds alternate the systems so load drift hits them alike. Targets: claim
p50 <= 5 ms and <= 0.25x a start; the claims' burst p99 <= the starts'
burst p99; restart with standby p50 <= 5 ms. Also printed: the resident
memory of one pooled worker (its whole sandboxed process tree). Figures
only: nothing here is a test.
"""

import argparse
import os
import sys
import tempfile
import threading
import time

from bench.side_by_side import format_seconds, machine_line, write_report
from bench.stats import summarize
from bench.rows import TIME

CLAIM_MS = 5.0
CLAIM_RATIO = 0.25
RESTART_MS = 5.0
BURST, BURST_POOL = 20, 4


def _first_result(kernel):
    result = kernel.execute("1+1")
    if result["error"]:
        raise RuntimeError(result["error"])


def _start(root, sandbox):
    from openai4s.kernel import Kernel
    from openai4s.kernel.sandbox_status import sandbox_for

    cwd = tempfile.mkdtemp(dir=root)
    began = time.perf_counter()
    kernel = Kernel(cwd=cwd, sandbox=sandbox_for(cwd, sandbox))
    _first_result(kernel)
    elapsed = time.perf_counter() - began
    kernel.shutdown()
    return elapsed


def _parallel(count, one):
    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _starts(root, sandbox, count):
    """`count` starts without a pool at once, each to its first result."""
    times, lock = [], threading.Lock()

    def one():
        elapsed = _start(root, sandbox)
        with lock:
            times.append(elapsed)

    _parallel(count, one)
    return times


def _claims(pool, count):
    """`count` claims in parallel, each to its first result: their times."""
    times, kernels, lock = [], [], threading.Lock()

    def one():
        began = time.perf_counter()
        kernel = pool.claim()
        _first_result(kernel)
        with lock:
            times.append(time.perf_counter() - began)
            kernels.append(kernel)

    _parallel(count, one)
    for kernel in kernels:
        kernel.shutdown()
    return times


def _restart(root, sandbox, standby):
    from openai4s.kernel import Kernel
    from openai4s.kernel.sandbox_status import sandbox_for

    cwd = tempfile.mkdtemp(dir=root)
    kernel = Kernel(cwd=cwd, sandbox=sandbox_for(cwd, sandbox), standby=standby)
    try:
        _first_result(kernel)
        kernel._core.wait_standby()
        began = time.perf_counter()
        kernel.restart()
        _first_result(kernel)
        return time.perf_counter() - began
    finally:
        kernel.shutdown()


def _measure(args, root):
    import openai4s

    names = ("start", "claim", "burst", "burst_start", "restart", "restart_standby")
    data = {name: [] for name in names}
    with openai4s.KernelPool(1, workspace_root=root, sandbox=args.sandbox) as single:
        for index in range(args.rounds):
            steps = [
                lambda: data["start"].append(_start(root, args.sandbox)),
                lambda: single.wait_full() and data["claim"].extend(_claims(single, 1)),
                lambda: data["restart"].append(_restart(root, args.sandbox, False)),
                lambda: data["restart_standby"].append(_restart(root, args.sandbox, True)),
            ]
            for step in steps if index % 2 == 0 else steps[::-1]:
                step()
    with openai4s.KernelPool(BURST_POOL, workspace_root=root, sandbox=args.sandbox) as pool:
        pool.wait_full()
        memory = pool.memory()
        data["worker_rss_bytes"] = memory["rss_bytes"] / max(1, memory["workers"])
        for index in range(args.bursts):
            steps = [
                lambda: pool.wait_full() and data["burst"].extend(_claims(pool, BURST)),
                lambda: data["burst_start"].extend(_starts(root, args.sandbox, BURST)),
            ]
            for step in steps if index % 2 == 0 else steps[::-1]:
                # Idle between bursts: the pool's refill is not measured.
                pool.wait_full()
                step()
    return data


def _quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _rows(data):
    start = summarize(TIME, data["start"])
    claim = summarize(TIME, data["claim"])
    standby = summarize(TIME, data["restart_standby"])
    burst_p99, start_p99 = _quantile(data["burst"], 0.99), _quantile(data["burst_start"], 0.99)
    rows = [
        ("start without the pool -> `1+1`", data["start"], None),
        (
            "pool claim -> `1+1`",
            data["claim"],
            claim["median"] * 1e3 <= CLAIM_MS and claim["median"] <= CLAIM_RATIO * start["median"],
        ),
        (f"burst of {BURST} starts, no pool", data["burst_start"], None),
        (f"burst of {BURST} claims, pool of {BURST_POOL}", data["burst"], burst_p99 <= start_p99),
        ("restart -> `1+1`, no standby", data["restart"], None),
        (
            "restart -> `1+1`, standby",
            data["restart_standby"],
            standby["median"] * 1e3 <= RESTART_MS,
        ),
    ]
    out = []
    for label, samples, met in rows:
        summary = summarize(TIME, samples)
        p99 = _quantile(samples, 0.99)
        verdict = "" if met is None else ("  target met" if met else "  target NOT met")
        print(
            f"{label:40s} p50 {format_seconds(summary['median'])}  p90 "
            f"{format_seconds(summary['p90'])}  p99 {format_seconds(p99)}  "
            f"n={len(samples)}  {summary['median'] / start['median']:.3f}x start{verdict}"
        )
        out.append({"metric": label, "samples": samples, "p99": p99, "met": met, **summary})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.warm_pool", description=__doc__)
    parser.add_argument("--rounds", type=int, default=10, help="samples of each single row")
    parser.add_argument("--bursts", type=int, default=3, help="bursts of 20 claims")
    parser.add_argument("--sandbox", default=None, help="auto | enforce | off (default: env)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="o4s-pool-bench-") as root:
        data = _measure(args, root)
    elapsed = time.perf_counter() - began
    rows = _rows(data)
    print(f"one pooled worker's resident memory: {data['worker_rss_bytes'] / 2**20:.1f} MiB")
    load_after = os.getloadavg()
    print(f"sandbox: {args.sandbox or os.environ.get('OPENAI4S_KERNEL_SANDBOX', 'auto')}")
    print(machine_line(load_before, load_after, elapsed))
    report = {"rows": rows, "load_before": load_before, "load_after": load_after}
    report["worker_rss_bytes"] = data["worker_rss_bytes"]
    report["seconds"] = elapsed
    print(f"results: {write_report('warm-pool', report)}")
    return 0 if all(row["met"] is not False for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
