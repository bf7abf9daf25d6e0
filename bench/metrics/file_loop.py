"""A cell reading N small files, against the same loop in plain Python.

The loop times itself (perf_counter around it) and prints the figure, so the
in-cell row is measured identically everywhere. The time-to-result row adds
what the kernel does around the cell (e.g. reporting the files read); for
plain Python, which has no result to build, it is the loop time itself.
"""

import os
import time

from bench.rows import TIME, Row, Target
from bench.systems import KERNEL_SYSTEMS, plain

NAME = "file_loop"
SYSTEMS = KERNEL_SYSTEMS + ("plain",)

_FILE_BYTES = 100


def rows(profile):
    label = f"{profile.files:,}-file read loop"
    return (
        Row(
            "file_loop",
            f"{label}, time to result",
            TIME,
            (Target(1.2, "file_loop", "plain"),),
        ),
        Row(
            "file_loop_in_cell",
            f"{label}, in-cell time",
            TIME,
            (Target(1.2, "file_loop_in_cell", "plain", informative=True),),
        ),
    )


def _folder(ctx):
    return os.path.join(ctx.workspace, "files")


def setup(ctx):
    folder = _folder(ctx)
    os.makedirs(folder, exist_ok=True)
    for index in range(ctx.profile.files):
        with open(os.path.join(folder, f"f{index:05d}.txt"), "w") as out:
            out.write(f"{index:05d}".ljust(_FILE_BYTES - 1, ".") + "\n")


def cell(folder, files):
    return (
        "import os, time\n"
        "_t = time.perf_counter()\n"
        "_n = 0\n"
        f"for _i in range({files}):\n"
        f"    with open(os.path.join({folder!r}, f'f{{_i:05d}}.txt')) as _f:\n"
        "        _n += len(_f.read())\n"
        "print(time.perf_counter() - _t, _n)\n"
    )


def _parse(stdout, files):
    seconds, chars = stdout.split()
    if int(chars) != files * _FILE_BYTES:
        raise RuntimeError(f"the loop read {chars} chars, expected {files * _FILE_BYTES}")
    return float(seconds)


def measure(ctx, system):
    code = cell(_folder(ctx), ctx.profile.files)
    to_result, in_cell = [], []
    for _ in range(ctx.profile.file_reps):
        if system == "plain":
            loop = _parse(plain.run_code(code, ctx.cell_cwd), ctx.profile.files)
            to_result.append(loop)
            in_cell.append(loop)
            continue
        session = ctx.warm(system)
        started = time.perf_counter()
        result = session.execute(code)
        to_result.append(time.perf_counter() - started)
        if result.error:
            raise RuntimeError(f"file loop cell failed: {result.error}")
        in_cell.append(_parse(result.stdout, ctx.profile.files))
    return {"file_loop": to_result, "file_loop_in_cell": in_cell}
