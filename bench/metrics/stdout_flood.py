"""A cell that floods stdout (20,000,000 characters in 10,000-character
writes): time to result, and how much of it reached the client live
(on_chunk / iopub stream messages), in the result, and in a file the
overflow was written to (openai4s spills stdout past its cap, completing the
file after the result, so its size is read after a further untimed cell;
Jupyter delivers everything live, so 0)."""

import time

from bench.rows import BYTES, CHARS, TIME, Row, Target
from bench.systems import KERNEL_SYSTEMS

NAME = "stdout_flood"
SYSTEMS = KERNEL_SYSTEMS


def rows(profile):
    size = f"{profile.stdout_chars / 1e6:g} M chars"
    return (
        Row(
            "stdout_flood",
            f"stdout {size}, time to result",
            TIME,
            (Target(0.05, "stdout_flood", "jupyter"),),
        ),
        Row("stdout_flood_live", f"stdout {size}, chars delivered live", CHARS),
        Row("stdout_flood_result", f"stdout {size}, chars in the result", CHARS),
        Row("stdout_flood_spilled", f"stdout {size}, bytes in the overflow file", BYTES),
    )


def cell(profile):
    writes = profile.stdout_chars // profile.stdout_write
    return (
        "import sys\n"
        f"_chunk = 'x' * {profile.stdout_write}\n"
        f"for _ in range({writes}):\n"
        "    sys.stdout.write(_chunk)\n"
    )


def _ignore(text):
    pass


def measure(ctx, system):
    session = ctx.warm(system)
    started = time.perf_counter()
    result = session.execute(cell(ctx.profile), on_stream=_ignore)
    elapsed = time.perf_counter() - started
    if result.error:
        raise RuntimeError(f"stdout flood cell failed: {result.error}")
    # Outside the timed region: openai4s writes the file after the result.
    spilled = session.spilled_bytes(result)
    return {
        "stdout_flood": [elapsed],
        "stdout_flood_live": [result.streamed_chars],
        "stdout_flood_result": [len(result.stdout)],
        "stdout_flood_spilled": [spilled],
    }
