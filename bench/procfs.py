"""Process memory from /proc: RSS, PSS and USS of a process tree.

USS (what the process alone holds) is Private_Clean + Private_Dirty +
Private_Hugetlb; PSS splits shared pages among their sharers. Both come from
/proc/<pid>/smaps_rollup (Linux 4.14+).
"""

import os

_FIELDS = {
    "Rss": "rss",
    "Pss": "pss",
    "Private_Clean": "uss",
    "Private_Dirty": "uss",
    "Private_Hugetlb": "uss",
}


def smaps_rollup(pid):
    """{'rss', 'pss', 'uss'} in bytes for one process."""
    totals = {"rss": 0, "pss": 0, "uss": 0}
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            name, _, rest = line.partition(":")
            key = _FIELDS.get(name)
            if key is not None:
                totals[key] += int(rest.split()[0]) * 1024
    return totals


def _parent_of(pid):
    with open(f"/proc/{pid}/stat") as stat:
        text = stat.read()
    # The command name may hold spaces and parentheses: split after the last ')'.
    return int(text[text.rindex(")") + 2 :].split()[1])


def descendants(roots):
    """The roots and every process below them."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                children.setdefault(_parent_of(int(entry)), []).append(int(entry))
            except (OSError, ValueError):
                continue  # exited while we looked
    found, pending = [], list(roots)
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, ()))
    return found


def tree_memory(roots):
    """Summed {'rss', 'pss', 'uss'} of the roots' process trees."""
    totals = {"rss": 0, "pss": 0, "uss": 0}
    for pid in descendants(roots):
        try:
            for key, value in smaps_rollup(pid).items():
                totals[key] += value
        except OSError:
            continue
    return totals


def own_rss():
    return smaps_rollup(os.getpid())["rss"]


def tree_cpu(roots):
    """User + system CPU seconds of the roots' process trees so far (live
    processes only: a child that already exited is not counted)."""
    ticks = 0
    for pid in descendants(roots):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")
