"""Running one cell so that Ctrl-C reaches it.

Python delivers SIGINT to the main thread only, between bytecodes; a main
thread blocked inside `Kernel.execute` (a C++ call) would not see Ctrl-C
until the cell ended. So the cell runs on a worker thread and the main
thread waits in short slices, turning each KeyboardInterrupt into
`Kernel.interrupt()`, which never blocks.

The wait is on an Event, not `Thread.join(timeout)`: in Python 3.11 a
KeyboardInterrupt landing inside `join` can release the running thread's
state lock and mark it finished while it still runs (bpo-45274's fix), so
the cell would look done without a result.
"""

import threading

#: How long the main thread sleeps between checks; bounds Ctrl-C latency.
_WAIT_SLICE_S = 0.1

#: Ctrl-C presses after which an unresponsive kernel is killed (the REPL
#: then restarts it): the way out of a cell stuck in C code.
KILL_AFTER_PRESSES = 3


class CellFailed(Exception):
    """`Kernel.execute` raised instead of answering (e.g. the worker died)."""


def run_cell(kernel, code, on_chunk, on_ctrl_c=None, broker=None, **options):
    """Execute `code` on `kernel`, streaming stdout to `on_chunk`.

    Returns the response dict, or raises CellFailed with the exception
    `execute` raised. `on_ctrl_c(presses, delivery)` is told about each
    Ctrl-C (`delivery` is what `interrupt()` returned, None when the kernel
    was killed instead). `broker` (a PromptBroker) gets its questions asked
    on this thread while the cell runs; `options` go to `execute`.
    """
    outcome = {}
    done = threading.Event()

    def target():
        try:
            outcome["result"] = kernel.execute(code, on_chunk=on_chunk, **options)
        except BaseException as exc:  # reported on the main thread
            outcome["exception"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="openai4s-cell", daemon=True).start()
    _wait_forwarding_ctrl_c(done, kernel, on_ctrl_c, broker)
    if "exception" in outcome:
        raise CellFailed(outcome["exception"]) from outcome["exception"]
    return outcome["result"]


def _wait_forwarding_ctrl_c(done, kernel, on_ctrl_c, broker=None):
    presses = 0
    while not done.is_set():
        try:
            if broker is not None:
                broker.serve()
            done.wait(_WAIT_SLICE_S)
        except KeyboardInterrupt:
            presses += 1
            try:
                delivery = _stop(kernel, presses)
                if on_ctrl_c is not None:
                    on_ctrl_c(presses, delivery)
            except KeyboardInterrupt:
                # A press that lands while the previous one is handled is
                # counted; the loop keeps waiting for the cell to end.
                presses += 1


def _stop(kernel, presses):
    if presses >= KILL_AFTER_PRESSES:
        kernel.kill_worker()
        return None
    return kernel.interrupt()
