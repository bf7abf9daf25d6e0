"""The memory probe, run in a fresh interpreter by bench.metrics.memory:
`python -m bench.metrics.memory_probe SYSTEM N CWD SETTLE_S`.

Starts one kernel (runs `1+1`), lets it settle, reads the idle worker's
memory and the probe's own RSS; starts N-1 more the same way and reads the
total and the RSS again. The host cost per extra kernel is the RSS growth
over those N-1, so one-time costs (lazy imports on the first kernel) are
excluded. Prints one marked JSON line on stdout.
"""

import gc
import json
import signal
import sys
import time

from bench import procfs, systems
from bench.metrics.memory import PROBE_MARK


def _start_ready(system, cwd):
    session = systems.start(system, cwd)
    result = session.execute("1+1")
    if result.error:
        session.close()
        raise RuntimeError(f"`1+1` failed: {result.error}")
    return session


def _host_rss(settle_s):
    time.sleep(settle_s)
    gc.collect()
    return procfs.own_rss()


def measure(system, count, cwd, settle_s):
    sessions = []
    try:
        sessions.append(_start_ready(system, cwd))
        host_one = _host_rss(settle_s)
        idle = procfs.tree_memory(sessions[0].worker_pids())
        for _ in range(count - 1):
            sessions.append(_start_ready(system, cwd))
        host_all = _host_rss(settle_s)
        pids = [pid for session in sessions for pid in session.worker_pids()]
        kernels = procfs.tree_memory(pids)
    finally:
        for session in sessions:
            session.close()
    per_kernel = (host_all - host_one) / (count - 1) if count > 1 else None
    return {"idle": idle, "kernels": kernels, "host_per_kernel": per_kernel}


def main(argv):
    system, count, cwd, settle_s = argv[0], int(argv[1]), argv[2], float(argv[3])
    # A parent that gives up sends SIGTERM; exiting through SystemExit runs
    # the finally that closes every kernel.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    found = measure(system, count, cwd, settle_s)
    print(PROBE_MARK + json.dumps(found), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
