"""Review finding: the `interrupt` frame the host now sends before its SIGINT
(kernel/cell_interrupts.h) must not make a waiting input() fail as if its
cell had finished.

input() reads the protocol pipe while it waits for its reply; a main-loop
request read there means the host has moved on, and input() gives up with
"the cell has finished". The interrupt frame is not such a request: the
cell is still running, and the SIGINT that follows the frame is what stops
it. A cell that handles SIGINT itself (a handler that does not raise) must
still get its answer."""

import threading


CELL = (
    "import signal\n"
    "caught = []\n"
    "signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))\n"
    "try:\n"
    "    answer = input('go? ')\n"
    "except Exception as exc:\n"
    "    answer = f'{type(exc).__name__}: {exc}'\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "print(answer)"
)


def test_an_interrupt_frame_does_not_end_a_waiting_input(kernel):
    asked = threading.Event()
    interrupted = threading.Event()

    def answer_after_the_interrupt(prompt, password):
        asked.set()
        assert interrupted.wait(30)
        return "the answer"

    box = {}
    runner = threading.Thread(
        target=lambda: box.update(r=kernel.execute(CELL, on_input=answer_after_the_interrupt))
    )
    runner.start()
    assert asked.wait(30)
    kernel.interrupt()
    interrupted.set()
    runner.join(60)
    assert not runner.is_alive()
    result = box["r"]
    assert result["error"] is None, result
    assert result["stdout"] == "the answer\n", result
    # The kernel goes on as before.
    assert kernel.execute("print('next')")["stdout"] == "next\n"
