"""Protocol IN recovery: a Cell that closes or recycles the worker's descriptor."""

from worker_harness import echo_dispatcher

CLOSE_AND_RECYCLE = (
    "import os, sys\n"
    "fd = sys._openai4s_protocol_stdin.fileno()\n"
    "os.close(fd)\n"
    "mine = open('mine.txt', 'w')\n"
    "print(mine.fileno() == fd)\n"
)


def test_a_recycled_descriptor_is_recovered_once_and_never_closed(worker, tmp_path):
    response, _ = worker.execute(CLOSE_AND_RECYCLE)
    assert response["stdout"] == "True\n"
    # The next request arrives over the reserve; the Cell's file survives.
    response, _ = worker.execute(
        "mine.write('still mine'); mine.close()\nprint(host._call('ping', []))",
        on_host_call=echo_dispatcher,
    )
    assert response["error"] is None and response["stdout"] == "pong\n"
    assert (tmp_path / "mine.txt").read_text() == "still mine"
    response, _ = worker.execute("print(len(sys._openai4s_parked_wrappers))")
    assert response["stdout"] == "1\n"


def test_a_second_corruption_ends_the_worker_with_a_clear_error(worker):
    worker.execute(CLOSE_AND_RECYCLE)
    response, _ = worker.execute("mine.close()\n" + CLOSE_AND_RECYCLE)
    assert response["error"] is None  # this Cell is still answered
    # Its next read finds the descriptor gone again, with no reserve left.
    assert worker.read() is None
    worker.proc.wait(timeout=10)
    assert "protocol IN corrupted and no reserve fd to recover" in worker.stderr


def test_a_closed_wrapper_is_recovered(worker):
    worker.execute("import sys\nsys._openai4s_protocol_stdin.close()")
    assert worker.execute("print('back')")[0]["stdout"] == "back\n"
