"""Worker runtime numbers: start-up, small-file reads, idle memory, big prints.

    PYTHONPATH=python /usr/bin/python3 tests/python/worker/bench_worker_runtime.py [--smoke]

Spawns the real worker over pipes (through the test harness, not the C++
manager) and compares against the same work in a plain interpreter. Not a
test (pytest does not collect it); test_performance.py holds loose bounds.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from worker_harness import PYTHON, WorkerProcess  # noqa: E402

LOOPS = {
    "open(text)": "with open(path) as handle:\n            handle.read()",
    "open(binary)": "with open(path, 'rb') as handle:\n            handle.read()",
    "pathlib": "Path(path).read_text()",
}
TEMPLATE = """
import time
from pathlib import Path
paths = [f"files/f{{i}}.txt" for i in range({count})]
best = 1e9
for _ in range({reps}):
    started = time.perf_counter()
    for path in paths:
        {body}
    best = min(best, time.perf_counter() - started)
print(best)
"""


def start_up(workspace, runs):
    bare, ready = [], []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([PYTHON, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        worker = WorkerProcess(workspace)
        worker.handshake()
        ready.append(time.perf_counter() - started)
        worker.kill()
    return statistics.median(bare), statistics.median(ready)


def reads(workspace, count, reps):
    files = workspace / "files"
    files.mkdir(exist_ok=True)
    for i in range(count):
        (files / f"f{i}.txt").write_text(f"hello {i}\n")
    worker = WorkerProcess(workspace)
    worker.handshake()
    worker.execute("x = 1")
    results = {}
    for name, body in LOOPS.items():
        code = TEMPLATE.format(count=count, reps=reps, body=body)
        plain = min(
            float(
                subprocess.run(
                    [PYTHON, "-c", code], cwd=workspace, capture_output=True, text=True, check=True
                ).stdout
            )
            for _ in range(3)
        )
        kernel = min(float(worker.execute(code)[0]["stdout"]) for _ in range(3))
        results[name] = (plain, kernel)
    worker.kill()
    return results


def idle_rss_kb(workspace):
    worker = WorkerProcess(workspace)
    worker.handshake()
    status = Path(f"/proc/{worker.proc.pid}/status").read_text()
    worker.kill()
    return int(status.split("VmRSS:")[1].split()[0])


def big_print(workspace):
    worker = WorkerProcess(workspace)
    worker.handshake()
    started = time.perf_counter()
    response, frames = worker.execute("print('x' * 20_000_000)")
    elapsed = time.perf_counter() - started
    worker.kill()
    return elapsed, len(frames), max(len(f.get("text", "")) for f in frames)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="few repetitions")
    smoke = parser.parse_args().smoke
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        bare, ready = start_up(workspace, 3 if smoke else 15)
        print(
            f"start-up: bare python {bare * 1e3:.1f} ms, worker to initialized "
            f"{ready * 1e3:.1f} ms ({ready / bare:.2f}x)"
        )
        for name, (plain, kernel) in reads(workspace, 2000, 3 if smoke else 15).items():
            print(
                f"2000 small files, {name}: plain {plain * 1e3:.2f} ms, kernel "
                f"{kernel * 1e3:.2f} ms ({kernel / plain:.3f}x)"
            )
        print(f"idle worker RSS: {idle_rss_kb(workspace)} kB")
        elapsed, chunks, largest = big_print(workspace)
        print(
            f"print('x' * 20_000_000): {elapsed * 1e3:.0f} ms, {chunks} frames, "
            f"largest chunk {largest} chars"
        )


if __name__ == "__main__":
    main()
