"""R kernel versus IRkernel, side by side in one run (issue 14).

`python -m bench.r_kernel [--rounds N] [--cells N]` times, for the openai4s
R kernel (Rscript + r_worker.R, sandbox off unless OPENAI4S_KERNEL_SANDBOX
says otherwise) and for IRkernel (Debian's r-cran-irkernel, kernel name
`ir`, driven by jupyter_client's BlockingKernelClient.execute_interactive):

* cold start: construct the kernel -> the result of `1+1` is back;
* round trip: one `1+1` cell on a warm kernel (request -> complete result,
  output included).

Rounds alternate the two systems so load drift hits both alike. Targets:
round trip <= 0.1x IRkernel, cold start <= 0.5x IRkernel.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from bench.side_by_side import (
    ApiKernel,
    cold_start,
    format_seconds,
    machine_line,
    median_p90,
    round_trips,
    write_report,
)

ROUND_TRIP_TARGET = 0.1
COLD_START_TARGET = 0.5


class IRkernel:
    name = "irkernel"

    def start(self, cwd):
        from jupyter_client import KernelManager

        self.km = KernelManager(kernel_name="ir")
        self.km.start_kernel(cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code):
        parts = []

        def hook(msg):
            kind = msg["header"]["msg_type"]
            if kind == "stream":
                parts.append(msg["content"].get("text", ""))
            elif kind in ("execute_result", "display_data"):
                parts.append(msg["content"]["data"].get("text/plain", ""))
            elif kind == "error":
                raise RuntimeError(msg["content"].get("evalue"))

        reply = self.kc.execute_interactive(code, output_hook=hook, timeout=120)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(reply["content"])
        return "".join(parts)

    def stop(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def _r_kernel(cwd):
    from openai4s.kernel.r_kernel import spawn_r_kernel

    return spawn_r_kernel(cwd=cwd)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.r_kernel", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="cold starts per system")
    parser.add_argument("--cells", type=int, default=200, help="round trips per round")
    args = parser.parse_args(argv)

    systems = [ApiKernel("openai4s-r", _r_kernel), IRkernel()]
    cold = {s.name: [] for s in systems}
    trips = {s.name: [] for s in systems}
    load_before = os.getloadavg()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="o4s-r-bench-") as cwd:
        for round_index in range(args.rounds):
            order = systems if round_index % 2 == 0 else systems[::-1]
            for system in order:
                cold[system.name].append(cold_start(system, cwd, "1+1", expect="2"))
                per_round = max(1, args.cells // args.rounds)
                trips[system.name].extend(round_trips(system, cwd, per_round, "1+1", warm=3))
    load_after = os.getloadavg()

    rows = []
    for label, data, target in (
        ("cold start (construct -> `1+1`)", cold, COLD_START_TARGET),
        ("`1+1` round trip", trips, ROUND_TRIP_TARGET),
    ):
        ours = median_p90(data["openai4s-r"])
        theirs = median_p90(data["irkernel"])
        ratio = ours[0] / theirs[0]
        verdict = "met" if ratio <= target else "NOT met"
        rows.append(
            {
                "metric": label,
                "openai4s_r": {"median_s": ours[0], "p90_s": ours[1], "n": len(data["openai4s-r"])},
                "irkernel": {"median_s": theirs[0], "p90_s": theirs[1], "n": len(data["irkernel"])},
                "ratio": ratio,
                "target": target,
                "met": ratio <= target,
            }
        )
        print(
            f"{label:34s} openai4s-r {format_seconds(ours[0])} / {format_seconds(ours[1])}   "
            f"irkernel {format_seconds(theirs[0])} / {format_seconds(theirs[1])}   "
            f"{ratio:.4f}x (<= {target}x: {verdict})"
        )
    elapsed = time.perf_counter() - began
    print(machine_line(load_before, load_after, elapsed))
    report = {"rows": rows, "load_before": load_before, "load_after": load_after}
    report["seconds"] = elapsed
    print(f"results: {write_report('r-kernel', report)}")
    return 0 if all(row["met"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
