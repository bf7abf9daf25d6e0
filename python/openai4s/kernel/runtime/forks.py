"""Whether this process is a child a Cell forked (multiprocessing's default
start method on Linux), and whether anything has forked at all.

Such a child inherits the Cell's stdout buffer, its spill file and the
protocol pipe. What it may still do with them is decided where they are
written (capture.py, spill.py); this module only keeps the facts, set by
``os.register_at_fork`` hooks so the hot paths read a list, not getpid().
"""

import os

#: Forks since start-up, counted in the parent and the child alike.
forks = [0]
#: Whether this process is such a child.
in_forked_child = [False]


def _after_in_parent() -> None:
    forks[0] += 1


def _after_in_child() -> None:
    forks[0] += 1
    in_forked_child[0] = True


os.register_at_fork(after_in_parent=_after_in_parent, after_in_child=_after_in_child)
