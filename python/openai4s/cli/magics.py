"""The REPL's IPython-style shortcuts, turned into ordinary cells.

Each shortcut becomes Python that the kernel runs like any cell (so its
output streams, Ctrl-C interrupts it, and it counts as a cell in the
traceback numbering); nothing here runs code on the host.

* `!cmd`         runs `cmd` with the shell in the kernel's directory.
* `%time stmt`   runs `stmt` as a cell; the REPL prints its wall/CPU time.
* `%timeit stmt` times `stmt` with `timeit` (autorange, best of 5).
* `obj?` / `obj??` asks the kernel to describe `obj` (no code runs).
"""

from dataclasses import dataclass

#: How many autorange repeats `%timeit` keeps the best of.
_TIMEIT_REPEATS = 5


@dataclass(frozen=True)
class Shortcut:
    kind: str  # "cell", "time" or "inspect"
    code: str
    detail_level: int = 0


def translate(text):
    """The Shortcut that `text` (a whole typed cell) is, or None."""
    stripped = text.strip()
    if stripped.startswith("!") and "\n" not in stripped:
        return Shortcut("cell", shell_cell(stripped[1:].strip()))
    if stripped.startswith("%time ") or stripped.startswith("%time\n"):
        return Shortcut("time", stripped[len("%time") :].strip())
    if stripped.startswith("%timeit ") or stripped.startswith("%timeit\n"):
        return Shortcut("cell", timeit_cell(stripped[len("%timeit") :].strip()))
    if "\n" not in stripped and stripped.endswith("?") and len(stripped) > 1:
        level = 1 if stripped.endswith("??") else 0
        target = stripped.rstrip("?").strip()
        if target.isidentifier() or _is_dotted_name(target):
            return Shortcut("inspect", target, level)
    return None


def _is_dotted_name(text):
    parts = text.split(".")
    return len(parts) > 1 and all(part.isidentifier() for part in parts)


def shell_cell(command):
    # An `if` statement, not an expression: the cell shows no value, only
    # what the command itself prints (captured at the fd level).
    return (
        f"if __import__('subprocess').call({command!r}, shell=True) != 0:\n"
        f"    print('(exit status non-zero)', file=__import__('sys').stderr)\n"
    )


def timeit_cell(statement):
    # Lambdas in one expression: nothing is added to the user's namespace.
    # autorange picks the loop count n (about 0.2 s a run); the best of r
    # runs of n loops is reported per loop, as IPython does.
    report = (
        "print(f'{min(t.repeat(r, n)) / n * 1e6:.3g} us per loop"
        " (best of {r} runs, {n} loops each)')"
    )
    timer = f"__import__('timeit').Timer({statement!r}, globals=globals())"
    return f"(lambda t, r: (lambda n: {report})(t.autorange()[0]))({timer}, {_TIMEIT_REPEATS})\n"


def format_time(usage, wall_s):
    """`%time`'s report from the response's usage (the worker's own clock)."""
    wall = usage.get("wall_s") if isinstance(usage, dict) else None
    cpu = usage.get("cpu_s") if isinstance(usage, dict) else None
    parts = []
    if isinstance(cpu, (int, float)):
        parts.append(f"CPU time: {_seconds(cpu)}")
    parts.append(f"Wall time: {_seconds(wall if isinstance(wall, (int, float)) else wall_s)}")
    return ", ".join(parts) + "\n"


def _seconds(value):
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} us"
