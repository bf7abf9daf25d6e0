"""SIGINT discipline: a stop ends a Cell, is never dropped, never kills the worker."""

import os
import sys
import threading
import time

import pytest

from worker_harness import echo_dispatcher

from openai4s.kernel import worker as worker_mod


def _run_until_host_call(worker, code, cell_id="c"):
    worker.send({"type": "execute", "id": cell_id, "code": code})
    while True:
        frame = worker.read()
        if frame["type"] == "host_call":
            return frame


def test_a_delivered_interrupt_ends_the_cell_as_interrupted(worker):
    worker.execute("marker = 'still-here'")
    call = _run_until_host_call(worker, "host._call('ping', [])\nimport time\ntime.sleep(30)")
    worker.answer(call, echo_dispatcher)
    time.sleep(0.2)
    started = time.monotonic()
    worker.interrupt()
    response, _ = worker.collect(timeout=10)
    assert time.monotonic() - started < 5
    assert response["interrupted"] is True
    assert response["error"] == "Interrupted"
    assert response["trace"] == {"error_lineno": None, "error_call": None}
    assert worker.execute("print(marker)")[0]["stdout"] == "still-here\n"


def test_an_interrupt_while_waiting_for_the_host_abandons_the_call(worker):
    call = _run_until_host_call(worker, "host._call('ping', [])\nimport time\ntime.sleep(30)")
    worker.interrupt()
    response, _ = worker.collect(timeout=10)
    assert response["interrupted"] is True
    # The host answers the call it had already dispatched; that late answer
    # must not be taken by the next Cell's call.
    worker.answer(call, lambda method, args: "stale answer")
    response, _ = worker.execute("print(host._call('ping', []))", on_host_call=echo_dispatcher)
    assert response["stdout"] == "pong\n"


def test_an_idle_worker_survives_interrupts(worker):
    for _ in range(3):
        worker.interrupt()
        time.sleep(0.05)
    assert worker.proc.poll() is None
    worker.execute("pass")
    worker.interrupt()
    time.sleep(0.1)
    response, _ = worker.execute("print('survived')")
    assert response["stdout"] == "survived\n" and response["interrupted"] is False


def test_an_interrupt_before_the_first_cell_is_survived(spawn):
    worker = spawn(handshake=False)
    # fd 0 moves to /dev/null right after the stop is disarmed: from then on
    # an interrupt must be swallowed, even before the handshake.
    deadline = time.monotonic() + 30
    while os.readlink(f"/proc/{worker.proc.pid}/fd/0") != "/dev/null":
        assert time.monotonic() < deadline, worker.stderr
        time.sleep(0.01)
    worker.interrupt()
    worker.handshake()
    assert worker.execute("print(1)")[0]["stdout"] == "1\n"


def test_a_stop_inside_a_stream_of_frames_leaves_every_line_whole(worker):
    worker.send(
        {
            "type": "execute",
            "id": "s",
            "code": "while True:\n    print('x' * 1000)",
        }
    )
    lines = [worker.read_line() for _ in range(50)]
    worker.interrupt()
    response, _ = worker.collect(timeout=10)  # every frame parses
    assert response["interrupted"] is True
    assert all(line.endswith("\n") for line in lines)


def test_the_handler_is_one_shot_while_the_cell_unwinds(worker):
    code = (
        "import time\n"
        "try:\n"
        "    host._call('ping', [])\n"
        "    time.sleep(30)\n"
        "finally:\n"
        "    time.sleep(0.5)\n"
        "    print('cleanup ran')"
    )
    call = _run_until_host_call(worker, code)
    worker.answer(call, echo_dispatcher)
    time.sleep(0.2)
    worker.interrupt()
    time.sleep(0.1)
    worker.interrupt()  # during the finally: swallowed
    response, _ = worker.collect(timeout=10)
    assert response["interrupted"] is True
    assert "cleanup ran" in response["stdout"]


def test_a_cell_whose_threads_are_busy_still_stops(worker):
    code = (
        "import threading, time\n"
        "for _ in range(4):\n"
        "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "host._call('ping', [])\n"
        "time.sleep(30)"
    )
    call = _run_until_host_call(worker, code)
    worker.answer(call, echo_dispatcher)
    time.sleep(0.2)
    worker.interrupt()
    response, _ = worker.collect(timeout=10)
    assert response["interrupted"] is True


@pytest.fixture
def installed(monkeypatch):
    """Record which handler the module installs instead of installing it."""
    record = {"handler": None}

    def fake_signal(signum, handler):
        previous, record["handler"] = record["handler"], handler
        return previous

    monkeypatch.setattr(worker_mod.signal, "signal", fake_signal)
    cells = (worker_mod._in_user_code, worker_mod._sigint_delivered, worker_mod._sigint_pending)
    for cell in cells:
        cell[0] = False
    yield record
    for cell in cells:
        cell[0] = False


def test_an_early_stop_is_owed_and_paid_once(installed):
    assert worker_mod._arm_sigint() is True
    worker_mod._sigint_handler(2, None)
    assert worker_mod._sigint_pending[0] is True
    assert installed["handler"] is worker_mod._sigint_handler
    worker_mod._in_user_code[0] = True
    with pytest.raises(KeyboardInterrupt):
        worker_mod._raise_if_sigint_pending()
    assert worker_mod._sigint_delivered[0] is True
    assert installed["handler"] is worker_mod._sigint_swallow
    worker_mod._raise_if_sigint_pending()  # paid: nothing more owed


def test_a_stop_in_user_code_raises_and_disarms(installed):
    worker_mod._arm_sigint()
    worker_mod._in_user_code[0] = True
    with pytest.raises(KeyboardInterrupt):
        worker_mod._sigint_handler(2, None)
    assert worker_mod._sigint_delivered[0] is True
    assert installed["handler"] is worker_mod._sigint_swallow
    assert worker_mod._sigint_swallow(2, None) is None


def test_arming_clears_what_the_previous_cell_was_owed(installed):
    worker_mod._sigint_pending[0] = worker_mod._sigint_delivered[0] = True
    worker_mod._arm_sigint()
    assert worker_mod._sigint_pending[0] is False
    assert worker_mod._sigint_delivered[0] is False


def test_arming_failure_is_announced(monkeypatch):
    frames = []
    monkeypatch.setattr(worker_mod, "_write_frame", frames.append)

    def refuse(*_args):
        raise OSError("no signals here")

    monkeypatch.setattr(worker_mod.signal, "signal", refuse)
    assert worker_mod._arm_sigint() is False
    assert frames == [
        {
            "type": "log",
            "msg": "SIGINT could not be armed for this cell (OSError: no signals here); "
            "it cannot be interrupted and only the watchdog can end it",
        }
    ]


def test_a_stop_during_a_write_is_raised_after_the_whole_frame(monkeypatch, installed):
    lock = threading.Lock()
    monkeypatch.setattr(sys, "_openai4s_protocol_lock", lock, raising=False)
    written = []

    class Sink:
        def write(self, text):
            written.append(text)
            worker_mod._sigint_handler(2, None)

        def flush(self):
            written.append("<flush>")

    monkeypatch.setattr(worker_mod, "_proto_out", lambda: Sink())
    worker_mod._in_user_code[0] = True
    with pytest.raises(KeyboardInterrupt):
        worker_mod._write_frame({"type": "stdout_chunk", "id": "c", "text": "hi"})
    assert written == ['{"type":"stdout_chunk","id":"c","text":"hi"}\n', "<flush>"]
    assert not lock.locked()
    assert worker_mod._sigint_delivered[0] is True
    assert worker_mod._in_user_code[0] is True


def test_a_write_outside_user_code_never_raises(monkeypatch, installed):
    monkeypatch.setattr(sys, "_openai4s_protocol_lock", threading.Lock(), raising=False)

    class Sink:
        def write(self, text):
            worker_mod._sigint_handler(2, None)

        def flush(self):
            pass

    monkeypatch.setattr(worker_mod, "_proto_out", lambda: Sink())
    worker_mod._write_frame({"type": "response"})
    assert worker_mod._sigint_pending[0] is True  # owed, for the next arm to clear


def test_a_background_thread_write_does_not_touch_the_signal_state(monkeypatch, installed):
    monkeypatch.setattr(sys, "_openai4s_protocol_lock", threading.Lock(), raising=False)
    observed = []

    class Sink:
        def write(self, text):
            observed.append(worker_mod._in_user_code[0])

        def flush(self):
            pass

    monkeypatch.setattr(worker_mod, "_proto_out", lambda: Sink())
    worker_mod._in_user_code[0] = True
    thread = threading.Thread(target=worker_mod._write_frame, args=({"type": "log"},))
    thread.start()
    thread.join()
    assert observed == [True]


def test_a_stop_during_a_spill_write_leaves_no_hole(monkeypatch, installed, tmp_path):
    from openai4s.kernel.runtime import spill as spill_mod

    monkeypatch.setattr(spill_mod, "MAX_PENDING_CHARS", 10)
    monkeypatch.setattr(spill_mod, "_CHUNK_CHARS", 5)
    real_write = os.write

    def stop_then_write(fd, data):
        # As a stop landing in a blocking write: the handler runs first.
        worker_mod._sigint_handler(2, None)
        return real_write(fd, data)

    spill = spill_mod.SpillFile(str(tmp_path), "c", "stdout", worker_mod._sigint_held)
    worker_mod._arm_sigint()
    worker_mod._in_user_code[0] = True
    spill.start("head-")
    monkeypatch.setattr(spill_mod.os, "write", stop_then_write)
    with pytest.raises(KeyboardInterrupt):
        spill.write("x" * 20)  # past the bound: written now, and the stop lands in it
    monkeypatch.setattr(spill_mod.os, "write", real_write)
    assert worker_mod._sigint_delivered[0] is True
    worker_mod._in_user_code[0] = False
    spill.end()
    spill.finish()
    assert (tmp_path / spill.path).read_text() == "head-" + "x" * 20
