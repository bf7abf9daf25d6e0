"""`python -m bench.slurm_start [--rounds N]`: informational, never a test.

Time from `start_kernel` to the first result of a cell through the
`openai4s-python-slurm` kernelspec (a Slurm job on the cluster of
scripts/slurm_local.sh, which this starts if it is not up and then stops)
against the local `openai4s-python` kernelspec in the same run, and where
the Slurm start's time goes: submission (sbatch returns), scheduling (the
job runs), kernel start (the job reports its ports, then the kernel
answers). Prints one line per round and the medians.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import KernelManager

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm_local.sh"
BINARY = REPO / "build" / "release" / "apps" / "jupyter_kernel" / "openai4s-jupyter-kernel"


def _install(prefix, *flags):
    subprocess.run(
        [sys.executable, "-m", "openai4s", "jupyter", "install", "--prefix", str(prefix)]
        + ["--executable", str(BINARY), *flags],
        check=True,
        capture_output=True,
    )


def _first_result(name, workspace):
    """(total seconds, {phase: seconds}) of one start and one cell."""
    began = time.monotonic()
    km = KernelManager(kernel_name=name)
    km.start_kernel(cwd=str(workspace))
    launched = time.monotonic()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        reply = kc.execute_interactive("1 + 1", timeout=60, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok"
        done = time.monotonic()
    finally:
        kc.stop_channels()
        km.shutdown_kernel()
    phases = dict(getattr(km.provisioner, "timings", {}) or {})
    phases["launch"] = launched - began
    phases["first result"] = done - launched
    return done - began, phases


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.slurm_start")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    was_up = subprocess.run(["bash", str(SCRIPT), "status"], capture_output=True).returncode == 0
    if not was_up:
        subprocess.run(["bash", str(SCRIPT), "start"], check=True)
    conf = subprocess.run(["bash", str(SCRIPT), "env"], capture_output=True, text=True, check=True)
    os.environ["SLURM_CONF"] = conf.stdout.strip().split("=", 1)[1]
    try:
        with tempfile.TemporaryDirectory(prefix="o4s-bench-slurm-") as root:
            root = Path(root)
            _install(root / "prefix")
            _install(root / "prefix", "--slurm")
            os.environ["JUPYTER_PATH"] = str(root / "prefix" / "share" / "jupyter")
            os.environ["OPENAI4S_SLURM_DIR"] = str(root / "kernels")
            os.environ["OPENAI4S_DATA_DIR"] = str(root / "data")
            (root / "ws").mkdir()
            totals = {"openai4s-python": [], "openai4s-python-slurm": []}
            for round_ in range(args.rounds):
                for name, samples in totals.items():
                    total, phases = _first_result(name, root / "ws")
                    samples.append(total)
                    detail = ", ".join(f"{k} {v:.2f}s" for k, v in phases.items())
                    print(f"round {round_ + 1} {name}: {total:.2f}s ({detail})", flush=True)
            for name, samples in totals.items():
                print(f"median {name}: {statistics.median(samples):.2f}s")
    finally:
        if not was_up:
            subprocess.run(["bash", str(SCRIPT), "stop"], check=False)


if __name__ == "__main__":
    main()
