"""The worker's own end of containment with the sandbox off: on its way
out, the worker kills every process below it. With the sandbox off the
direct launcher makes the worker a child subreaper, so what a cell
orphaned (a double fork, `setsid cmd &`) is still below it; once the worker
exits, all of that would go up to init. The host ends the tree itself at
shutdown (proc/descendants.h); this covers the exits the host does not see
coming: the host dying (the worker reads end of input), or a cell thread
starting a process after the host's walk."""

import os
import signal
import time


def _children(pid):
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as listing:
                found.extend(int(word) for word in listing.read().split())
        except (OSError, ValueError):
            continue
    return found


def _parent_and_state(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[1]), fields[0]
    except (OSError, IndexError, ValueError):
        return None, None


def live_descendants(root=None):
    """(pid, parent) of every live process below `root` (this process by
    default), parents first."""
    root = os.getpid() if root is None else root
    found, parents, seen = [], [root], {root}
    for parent in parents:
        for child in _children(parent):
            if child in seen:
                continue
            seen.add(child)
            ppid, state = _parent_and_state(child)
            if ppid is None or state in ("Z", "X"):
                continue
            found.append((child, parent))
            parents.append(child)
    return found


def _signal(pid, parent, signum):
    # Through a pidfd, after checking the pid still has the parent the walk
    # saw: a pid freed and reused since then is never hit.
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        ppid, state = _parent_and_state(pid)
        if ppid != parent or state in (None, "Z", "X"):
            return False
        signal.pidfd_send_signal(pidfd, signum)
        return True
    except OSError:
        return False
    finally:
        os.close(pidfd)


def end_all(budget_s=2.0):
    """Stops every process below this one (walking again until a walk finds
    nobody new, so nothing forks meanwhile), then kills them and walks until
    none is alive or the budget is spent. Returns how many it signalled."""
    deadline = time.monotonic() + budget_s
    stopped = set()
    fresh = True
    while fresh and time.monotonic() < deadline:
        fresh = False
        for pid, parent in live_descendants():
            if pid not in stopped and _signal(pid, parent, signal.SIGSTOP):
                stopped.add(pid)
                fresh = True
    while time.monotonic() < deadline:
        left = live_descendants()
        if not left:
            break
        for pid, parent in left:
            if _signal(pid, parent, signal.SIGKILL):
                stopped.add(pid)
        time.sleep(0.002)
    return len(stopped)
