"""Memory: RSS/PSS/USS of one idle worker and of N live kernels, and the
host process's RSS growth per extra kernel.

Each sample runs in a fresh interpreter (bench.metrics.memory_probe) that
loads only the measured system's client, so neither system's host memory
carries the other's libraries or leftovers from earlier metrics.
"""

import json
import os
import signal
import subprocess
import sys

from bench.rows import BYTES, Row, Target
from bench.systems import KERNEL_SYSTEMS

NAME = "memory"
SYSTEMS = KERNEL_SYSTEMS

PROBE_MARK = "BENCH-PROBE "
_PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rows(profile):
    n = profile.kernels
    return (
        Row("idle_rss", "idle worker RSS", BYTES),
        Row("idle_pss", "idle worker PSS", BYTES),
        Row("idle_uss", "idle worker USS", BYTES, (Target(0.4, "idle_uss", "jupyter"),)),
        Row("kernels_rss", f"{n} live kernels, total RSS", BYTES),
        Row("kernels_pss", f"{n} live kernels, total PSS", BYTES),
        Row("kernels_uss", f"{n} live kernels, total USS", BYTES),
        Row(
            "host_per_kernel",
            "host RSS per extra kernel",
            BYTES,
            (Target(0.1, "host_per_kernel", "jupyter"),),
        ),
    )


def rounds(profile):
    return profile.memory_rounds


def _probe(system, profile, cwd):
    command = [
        sys.executable,
        "-m",
        "bench.metrics.memory_probe",
        system,
        str(profile.kernels),
        cwd,
        str(profile.settle_s),
    ]
    child = subprocess.Popen(command, cwd=_PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        out, _ = child.communicate(timeout=60 + 15 * profile.kernels)
    finally:
        if child.poll() is None:
            # SIGTERM first: the probe's finally blocks close its kernels.
            child.send_signal(signal.SIGTERM)
            try:
                child.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()
    if child.returncode != 0:
        raise RuntimeError(f"memory probe for {system} exited {child.returncode}")
    for line in out.splitlines():
        if line.startswith(PROBE_MARK):
            return json.loads(line[len(PROBE_MARK) :])
    raise RuntimeError(f"memory probe for {system} printed no result")


def measure(ctx, system):
    # A warm kernel of the bench would share pages with the probe's kernels
    # and move them out of their USS; the next metric that needs one starts
    # it again, untimed.
    for warm in SYSTEMS:
        ctx.discard(warm)
    found = _probe(system, ctx.profile, ctx.cell_cwd)
    samples = {f"idle_{k}": [v] for k, v in found["idle"].items()}
    samples.update({f"kernels_{k}": [v] for k, v in found["kernels"].items()})
    if found["host_per_kernel"] is not None:
        samples["host_per_kernel"] = [found["host_per_kernel"]]
    return samples
