"""The interactive REPL takes the terminal's foreground for itself.

A Ctrl-C at the terminal is sent to the whole foreground process group.
Under `make run` that group holds make too, and make answers SIGINT by
dying with it once its child is done: the session would end "Interrupt"
with status 2 although the REPL handled the key. Moving the REPL into a
process group of its own and making that group the terminal's foreground
(what a job-control shell does for a job) keeps the key for the REPL; the
previous group gets the terminal back when the session ends.
"""

import contextlib
import os
import signal


@contextlib.contextmanager
def terminal_foreground(stream):
    """Own the terminal behind `stream` for the duration; a no-op when it
    is not a terminal or the process cannot move (e.g. a session leader)."""
    try:
        fd = stream.fileno()
        previous = os.tcgetpgrp(fd)
    except (AttributeError, OSError, ValueError):
        yield
        return
    if previous != os.getpgrp() or os.getpid() == os.getsid(0):
        # Not in the foreground (nothing to take), or a session leader
        # (already alone in its group as far as the terminal goes).
        yield
        return
    try:
        os.setpgid(0, 0)
    except OSError:
        yield
        return
    _set_foreground(fd, os.getpgrp())
    try:
        yield
    finally:
        _set_foreground(fd, previous)


def _set_foreground(fd, pgrp):
    # A background group that calls tcsetpgrp gets SIGTTOU, which would stop
    # the process; ignore it just for the call.
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(fd, pgrp)
    except OSError:
        pass  # the terminal went away; nothing left to hand back
    finally:
        signal.signal(signal.SIGTTOU, old)
