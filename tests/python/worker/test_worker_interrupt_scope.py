"""An interrupt ends exactly the Cell it was aimed at (issue 12, point 1).

A re-sent signal from the interrupt relay once outlived its interrupt: each
re-sent SIGINT looked unhandled to the relay and was re-sent again, so the
cells after one interrupt saw `Interrupted` from blocking calls nobody
interrupted, and an interrupt sent to an idle worker hit the next Cell.
"""

import subprocess
import sys
import textwrap
import time

from worker_harness import PYTHON, PYTHON_ROOT, echo_dispatcher

_SLEEPY_CELLS = (
    "import time; time.sleep(0.5); 'done'",
    "import threading; print(threading.Event().wait(0.5))",
    "import subprocess; print(subprocess.run(['sleep', '0.5']).returncode)",
)


def _interrupt_a_sleeping_cell(worker):
    worker.send(
        {
            "type": "execute",
            "id": "victim",
            "code": "host._call('ping', [])\nimport time\ntime.sleep(30)",
        }
    )
    while True:
        frame = worker.read()
        if frame["type"] == "host_call":
            worker.answer(frame, echo_dispatcher)
            break
    time.sleep(0.1)
    worker.interrupt()
    response, _ = worker.collect(timeout=20)
    assert response["interrupted"] is True, response


def _assert_not_interrupted(worker, code):
    response, _ = worker.execute(code)
    assert response["interrupted"] is False and response["error"] is None, (code, response)
    return response


def test_the_cells_after_an_interrupt_are_not_interrupted(worker):
    for _ in range(4):
        _interrupt_a_sleeping_cell(worker)
        for _ in range(3):
            _assert_not_interrupted(worker, _SLEEPY_CELLS[0])
        for code in _SLEEPY_CELLS[1:]:
            _assert_not_interrupted(worker, code)


def test_an_idle_interrupt_does_not_poison_the_next_cell(worker):
    worker.execute("pass")
    for _ in range(4):
        worker.interrupt()
        time.sleep(0.05)
        for code in _SLEEPY_CELLS:
            _assert_not_interrupted(worker, code)


def test_back_to_back_interrupts_each_end_only_their_own_cell(worker):
    for _ in range(6):
        _interrupt_a_sleeping_cell(worker)
        _assert_not_interrupted(worker, _SLEEPY_CELLS[0])


def _relay_script(armed, lie_once):
    # A process of its own: the relay owns the process's wakeup fd.
    return textwrap.dedent(
        f"""
        import signal, sys, threading, time
        sys.path.insert(0, {str(PYTHON_ROOT)!r})
        from openai4s.kernel.runtime.interrupt_relay import InterruptRelay
        runs = [0]
        def handler(signum, frame):
            runs[0] += 1
        signal.signal(signal.SIGINT, handler)
        # lie_once: the first handler run is not counted, as if the signal
        # had fallen into the gap before a blocking call.
        counted = (lambda: max(runs[0] - 1, 0)) if {lie_once!r} else (lambda: runs[0])
        InterruptRelay(counted, lambda: {armed!r})
        time.sleep(0.2)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        total = 0
        for i in range(2000):  # the handler runs here, before the relay wakes
            total += i
        time.sleep(1.5)  # "the next cell": a re-sent signal would land here
        print(runs[0])
        """
    )


def _handler_runs(armed, lie_once=False):
    out = subprocess.run(
        [PYTHON, "-c", _relay_script(armed, lie_once)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


def test_the_relay_never_resends_a_signal_that_was_handled():
    for _ in range(3):
        assert _handler_runs(armed=7) == 1
        assert _handler_runs(armed=None) == 1


def test_the_relay_still_resends_an_unhandled_signal_exactly_once():
    assert _handler_runs(armed=7, lie_once=True) == 2
    # Nothing is re-sent while no Cell is armed.
    assert _handler_runs(armed=None, lie_once=True) == 1
