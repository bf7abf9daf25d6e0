"""The worker's thread primitives, from ``_thread``.

``threading`` costs every worker's start about 2 ms for classes the worker
never needs: it takes locks, two daemon threads and the main thread's ids.
A Cell that imports ``threading`` gets it then, whole; the worker's own
threads are not in its ``enumerate()``, which lists the Cell's threads only.

Imported by the worker's main thread at start (the ids below are its own).
"""

import _thread

Lock = _thread.allocate_lock
current_ident = _thread.get_ident
#: The main thread's Python identity, as threading.main_thread().ident.
MAIN_IDENT = _thread.get_ident()
#: The main thread's kernel thread id (for tgkill), as its ``native_id``.
MAIN_NATIVE_ID = _thread.get_native_id()


def start_daemon(target) -> None:
    """Run ``target()`` in a new thread that never holds the worker's exit."""
    _thread.start_new_thread(target, ())
