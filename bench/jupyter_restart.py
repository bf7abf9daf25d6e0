"""Jupyter restart to the first result: our kernelspec versus ipykernel,
both through jupyter_client, side by side in one run (issue 28).

`python -m bench.jupyter_restart [--rounds N]` installs the `openai4s-python`
kernelspec into a private prefix (as bench.jupyter_kernel does), then, for
it and for Debian's `python3` (ipykernel), starts a kernel, runs `1+1`, and
times `KernelManager.restart_kernel()` -> the result of the next `1+1`.

jupyter_client's restart stops the kernel's whole process and starts a new
one on the same ports, so our kernel's in-process standby worker (which
serves `%restart`, MCP `restart_kernel` and a worker that died) does not
serve it: this row is a cold start of our kernel plus jupyter_client's
shutdown of the old one. Rounds alternate the systems. Figures only.
"""

import argparse
import os
import sys
import tempfile
import time

from bench.jupyter_kernel import _install_spec
from bench.side_by_side import format_seconds, machine_line, median_p90, write_report
from bench.systems import jupyter_kernel

_SYSTEMS = (("openai4s", "openai4s-python"), ("ipykernel", "python3"))


def _first_result(session, name):
    result = session.execute("1+1")
    assert "2" in result.stdout, f"{name}: 1+1 gave {result.stdout!r} ({result.error})"


def _restart(kernel_name, cwd):
    session = jupyter_kernel.start(cwd, kernel_name)
    try:
        _first_result(session, kernel_name)
        began = time.perf_counter()
        session.restart()
        _first_result(session, kernel_name)
        return time.perf_counter() - began
    finally:
        session.close()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.jupyter_restart", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    data = {name: [] for name, _ in _SYSTEMS}
    load_before = os.getloadavg()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="o4s-jupyter-restart-") as root:
        _install_spec(root)
        cwd = os.path.join(root, "cells")
        os.mkdir(cwd)
        for _, spec in _SYSTEMS:  # untimed: client libraries and caches warm
            _restart(spec, cwd)
        for index in range(args.rounds):
            for name, spec in _SYSTEMS if index % 2 == 0 else _SYSTEMS[::-1]:
                data[name].append(_restart(spec, cwd))
    load_after = os.getloadavg()
    ours, theirs = median_p90(data["openai4s"]), median_p90(data["ipykernel"])
    ratio = ours[0] / theirs[0]
    print(
        f"{'restart -> `1+1`':30s} openai4s {format_seconds(ours[0])} / "
        f"{format_seconds(ours[1])}   ipykernel {format_seconds(theirs[0])} / "
        f"{format_seconds(theirs[1])}   {ratio:.3f}x"
    )
    print(machine_line(load_before, load_after, time.perf_counter() - began))
    report = {"rows": [{"metric": "restart", "openai4s": ours, "ipykernel": theirs}]}
    report.update(ratio=ratio, samples=data, load_before=load_before, load_after=load_after)
    print(f"report: {write_report('jupyter-restart', report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
