"""The openai4s Jupyter kernel versus ipykernel, both through jupyter_client,
side by side in one run (issue 13).

`python -m bench.jupyter_kernel [--rounds N] [--cells N]` installs the
`openai4s-python` kernelspec into a private prefix (the store in a private
data directory, sandbox mode from OPENAI4S_KERNEL_SANDBOX as for any
kernel), then times, for it and for Debian's `python3` (ipykernel), each
driven by the same adapter (KernelManager + BlockingKernelClient,
`execute_interactive`):

* cold start: start the kernel -> the result of `1+1` is back;
* `pass` round trip on a warm kernel (execute -> idle and reply);
* `print('hello')` round trip on a warm kernel (its stream message too);
* 20,000,000 characters of stdout in 10,000-character writes -> result
  (everything the client is sent, on iopub);
* interrupt: `time.sleep(30)` interrupted 0.3 s in; clean = reported as
  KeyboardInterrupt well before 30 s and a variable set before survives.

It also prints the CPU the kernel's process tree (for openai4s: the
kernel and its worker) spends per `pass` and per `print`, which a loaded
machine inflates far less than wall time, and the client's own CPU per
`pass` (the CPU time of the thread
that calls `execute_interactive`: building, signing and sending the
request, then receiving, verifying and decoding the four replies). A round
trip cannot take less wall time than that thread's work, whatever the
kernel does, so "client CPU (openai4s) / ipykernel round trip" bounds from
below the ratio any kernel could reach through this client (a lower bound:
libzmq's own I/O threads are not counted).

Rounds alternate the two systems. Targets (issue 28): `pass` <= 0.3x,
`print` <= 0.35x, cold start <= 0.2x; stdout <= 0.2x (issue 13), interrupts
100% clean.
"""

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time

from bench.procfs import tree_cpu
from bench.side_by_side import format_seconds, machine_line, median_p90, write_report
from bench.systems import jupyter_kernel

TARGETS = {"cold_start": 0.2, "pass_round_trip": 0.3, "print_round_trip": 0.35, "stdout_20m": 0.2}
_FLOOD = "import sys\n_c = 'x' * 10_000\nfor _ in range(2_000):\n    sys.stdout.write(_c)\n"
_SYSTEMS = (("openai4s", "openai4s-python"), ("ipykernel", "python3"))


def _install_spec(root):
    from openai4s.cli import jupyter as cli

    cli.install(prefix=os.path.join(root, "prefix"))
    os.environ["JUPYTER_PATH"] = os.path.join(root, "prefix", "share", "jupyter")
    os.environ["OPENAI4S_DATA_DIR"] = os.path.join(root, "data")


def _cold_start(kernel_name, cwd):
    began = time.perf_counter()
    session = jupyter_kernel.start(cwd, kernel_name)
    try:
        result = session.execute("1+1")
        elapsed = time.perf_counter() - began
    finally:
        session.close()
    assert "2" in result.stdout, f"{kernel_name}: 1+1 gave {result.stdout!r} ({result.error})"
    return elapsed


def _warm_rows(kernel_name, cwd, cells):
    session = jupyter_kernel.start(cwd, kernel_name)
    try:
        for _ in range(5):
            session.execute("pass")
        trips = []
        kernel_began = tree_cpu(session.worker_pids())
        cpu_began = time.thread_time()
        for _ in range(cells):
            began = time.perf_counter()
            session.execute("pass")
            trips.append(time.perf_counter() - began)
        client_cpu = (time.thread_time() - cpu_began) / cells
        kernel_cpu = {"pass": (tree_cpu(session.worker_pids()) - kernel_began) / cells}
        printed = []
        kernel_began = tree_cpu(session.worker_pids())
        for _ in range(cells):
            began = time.perf_counter()
            session.execute("print('hello')")
            printed.append(time.perf_counter() - began)
        kernel_cpu["print"] = (tree_cpu(session.worker_pids()) - kernel_began) / cells
        began = time.perf_counter()
        flood = session.execute(_FLOOD)
        flood_s = time.perf_counter() - began
        assert flood.error is None, flood.error
        session.execute("kept = 41")
        interrupter = threading.Timer(0.3, session.interrupt)
        began = time.perf_counter()
        interrupter.start()
        stopped = session.execute("import time; time.sleep(30)")
        interrupt_s = time.perf_counter() - began - 0.3
        interrupter.join()
        survived = session.execute("print(kept + 1)").stdout.strip() == "42"
        clean = stopped.interrupted and interrupt_s < 10 and survived
    finally:
        session.close()
    return trips, printed, flood_s, clean, interrupt_s, client_cpu, kernel_cpu


def _ratio_rows(data):
    """Prints and returns each timed row: medians, p90s, the ratio, the target."""
    rows = []
    for metric, label in (
        ("cold_start", "cold start (start -> `1+1`)"),
        ("pass_round_trip", "`pass` round trip"),
        ("print_round_trip", "`print('hello')` round trip"),
        ("stdout_20m", "stdout 20 M chars -> result"),
    ):
        ours, theirs = median_p90(data["openai4s"][metric]), median_p90(data["ipykernel"][metric])
        ratio = ours[0] / theirs[0]
        met = ratio <= TARGETS[metric]
        rows.append(
            {
                "metric": metric,
                "openai4s": ours,
                "ipykernel": theirs,
                "ratio": ratio,
                "target": TARGETS[metric],
                "met": met,
            }
        )
        print(
            f"{label:30s} openai4s {format_seconds(ours[0])} / {format_seconds(ours[1])}   "
            f"ipykernel {format_seconds(theirs[0])} / {format_seconds(theirs[1])}   "
            f"{ratio:.3f}x (<= {TARGETS[metric]}x: {'met' if met else 'NOT met'})"
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.jupyter_kernel", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cells", type=int, default=100, help="pass round trips per round")
    args = parser.parse_args(argv)

    data = {
        name: {
            "cold_start": [],
            "pass_round_trip": [],
            "print_round_trip": [],
            "stdout_20m": [],
            "clean": [],
        }
        for name, _ in _SYSTEMS
    }
    interrupt_latency = {name: [] for name, _ in _SYSTEMS}
    client_cpu = {name: [] for name, _ in _SYSTEMS}
    kernel_cpu = {name: {"pass": [], "print": []} for name, _ in _SYSTEMS}
    load_before = os.getloadavg()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="o4s-jupyter-bench-") as root:
        _install_spec(root)
        cwd = os.path.join(root, "cells")
        os.mkdir(cwd)
        for name, spec in _SYSTEMS:  # untimed: client libraries and caches warm
            _cold_start(spec, cwd)
        for round_index in range(args.rounds):
            order = _SYSTEMS if round_index % 2 == 0 else _SYSTEMS[::-1]
            for name, spec in order:
                data[name]["cold_start"].append(_cold_start(spec, cwd))
                warm = _warm_rows(spec, cwd, args.cells)
                trips, printed, flood_s, clean, latency, cpu, kernel = warm
                for cell in ("pass", "print"):
                    kernel_cpu[name][cell].append(kernel[cell])
                data[name]["print_round_trip"].extend(printed)
                client_cpu[name].append(cpu)
                data[name]["pass_round_trip"].extend(trips)
                data[name]["stdout_20m"].append(flood_s)
                data[name]["clean"].append(clean)
                interrupt_latency[name].append(latency)
    load_after = os.getloadavg()

    rows = _ratio_rows(data)
    for name, _ in _SYSTEMS:
        clean = data[name]["clean"]
        latency = statistics.median(interrupt_latency[name])
        print(
            f"interrupt {name:10s} {sum(clean)}/{len(clean)} clean, median {format_seconds(latency)}"
        )
    cpu = {name: statistics.median(client_cpu[name]) for name, _ in _SYSTEMS}
    for name, _ in _SYSTEMS:
        print(f"client CPU per `pass` with {name:10s} {format_seconds(cpu[name])}")
    kernel = {n: {c: statistics.median(v) for c, v in kernel_cpu[n].items()} for n, _ in _SYSTEMS}
    for name, _ in _SYSTEMS:
        print(
            f"kernel CPU per `pass` / `print` of {name:10s} {format_seconds(kernel[name]['pass'])}"
            f" / {format_seconds(kernel[name]['print'])}"
        )
    floor = cpu["openai4s"] / median_p90(data["ipykernel"]["pass_round_trip"])[0]
    print(
        f"no kernel can reach a `pass` ratio below {floor:.3f}x through this client "
        "(its calling thread's CPU per round trip / ipykernel's round trip)"
    )
    ours_clean = all(data["openai4s"]["clean"])
    elapsed = time.perf_counter() - began
    print(machine_line(load_before, load_after, elapsed))
    report = {"rows": rows, "clean": {n: data[n]["clean"] for n, _ in _SYSTEMS}}
    report.update(client_cpu_per_pass=cpu, client_floor_ratio=floor, kernel_cpu_per_cell=kernel)
    report.update(load_before=load_before, load_after=load_after)
    print(f"report: {write_report('jupyter-kernel', report)}")
    return 0 if all(row["met"] for row in rows) and ours_clean else 1


if __name__ == "__main__":
    sys.exit(main())
