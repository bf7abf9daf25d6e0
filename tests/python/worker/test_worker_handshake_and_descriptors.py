"""Start-up: the attestation handshake and where the worker's fds point."""

import json
import subprocess

import pytest

from worker_harness import PYTHON, worker_env


def test_initialize_is_answered_with_its_own_id(worker):
    # The fixture already asserted the exact frame; the worker then serves.
    response, _ = worker.execute("print('ready')")
    assert response["stdout"] == "ready\n"


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        ({"type": "execute", "id": "x", "code": "1"}, "missing manager attestation handshake"),
        ({"type": "initialize", "id": "x"}, "missing manager attestation handshake"),
        (
            {"type": "initialize", "id": "x", "skill_attestation_key": 7},
            "missing manager attestation handshake",
        ),
        (
            {"type": "initialize", "id": "x", "skill_attestation_key": "zz" * 32},
            "invalid manager attestation handshake",
        ),
        (
            {"type": "initialize", "id": "x", "skill_attestation_key": "ab" * 31},
            "invalid manager attestation handshake",
        ),
        (
            {"type": "initialize", "id": "x", "skill_attestation_key": "ab " * 32},
            "invalid manager attestation handshake",
        ),
    ],
)
def test_a_bad_handshake_is_refused_and_the_worker_exits(spawn, frame, error):
    worker = spawn(handshake=False)
    worker.send(frame)
    assert worker.read() == {"type": "initialization_error", "id": "x", "error": error}
    assert worker.read() is None
    assert worker.proc.wait(timeout=10) == 0


def test_a_refusal_without_an_id_says_unknown(spawn):
    worker = spawn(handshake=False)
    worker.send([1, 2, 3])
    frame = worker.read()
    assert frame["type"] == "initialization_error" and frame["id"] == "unknown"


@pytest.mark.parametrize("first_line", ["", "not json\n"])
def test_end_of_stream_or_garbage_before_initialize_exits_silently(spawn, first_line):
    worker = spawn(handshake=False)
    if first_line:
        worker.send_raw(first_line)
    worker.proc.stdin.close()
    assert worker.read() is None
    assert worker.proc.wait(timeout=10) == 0


def test_stdin_is_dev_null_and_native_writes_stay_off_the_wire(worker):
    code = (
        "import os, sys\n"
        "print(os.readlink('/proc/self/fd/0'))\n"
        "print(repr(sys.stdin.read()))\n"
        "os.write(1, b'native-stdout-write\\n')\n"
        "os.write(2, b'native-stderr-write\\n');"
    )
    response, frames = worker.execute(code)
    assert response["error"] is None
    # fd 1/2 writes belong to the Cell (issue 12), never onto the wire as a
    # bad line; fd 0 reads as empty (input() asks the host instead).
    assert response["stdout"].splitlines() == ["/dev/null", "''", "native-stdout-write"]
    assert response["stderr"] == "native-stderr-write\n"
    assert all(frame["type"] == "stdout_chunk" for frame in frames)
    # Between Cells fd 1 is the worker's stderr again.
    worker.execute("os.write(1, b'') or None")
    worker.shutdown()
    assert "native-stdout-write" not in worker.stderr


def test_input_asks_the_host_over_the_protocol_not_fd_0(worker):
    cell = "cell-input"
    worker.send({"type": "execute", "id": cell, "code": "print(input('q? '))", "origin": "agent"})
    request = worker.read()
    assert request == {
        "type": "input_request",
        "id": cell,
        "prompt": "q? ",
        "password": False,
        "seq": request["seq"],
    }
    worker.send({"type": "input_reply", "id": cell, "seq": request["seq"], "value": "a\n"})
    response, _ = worker.collect()
    assert response["stdout"] == "a\n" and response["error"] is None


def test_protocol_descriptors_are_not_inherited_by_children(worker):
    code = (
        "import subprocess, sys\n"
        "out = subprocess.check_output(['ls', '/proc/self/fd'], text=True)\n"
        "print(sorted(int(fd) for fd in out.split()))\n"
    )
    response, _ = worker.execute(code)
    fds = json.loads(response["stdout"])
    # 0-2 plus the listing's own directory handle; nothing of the protocol.
    assert fds[:3] == [0, 1, 2] and len(fds) <= 4, fds


def test_the_script_directory_is_not_on_sys_path(worker):
    response, _ = worker.execute(
        "import sys\nprint(any(p.rstrip('/').endswith('openai4s/kernel') for p in sys.path))"
    )
    assert response["stdout"] == "False\n"


def test_cells_share_the_one_importable_copy_of_the_worker_state(worker):
    # The script copy (__main__) must hold no state: the SIGINT cells the
    # runtime uses are those of openai4s.kernel.worker.
    code = (
        "import sys\n"
        "import openai4s.kernel.worker as w\n"
        "print(w._in_user_code[0], hasattr(w, '_Wire'), hasattr(sys.modules['__main__'], '_Wire'))"
    )
    response, _ = worker.execute(code)
    assert response["stdout"] == "True True False\n"


def test_the_worker_never_loads_the_host_core(worker):
    response, _ = worker.execute(
        "import sys\nprint([m for m in sys.modules if m in "
        "('openai4s._core', 'openai4s.kernel.manager', 'openai4s.config')])"
    )
    assert response["stdout"] == "[]\n"


def test_shutdown_ends_the_worker_even_with_a_running_user_thread(worker):
    worker.execute(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(60,)).start()"
    )
    assert worker.shutdown(timeout=10) == 0


def test_importing_the_module_has_no_side_effects(tmp_path):
    probe = (
        "import os, signal, sys\n"
        "before = (signal.getsignal(signal.SIGINT), sorted(os.listdir('/proc/self/fd')))\n"
        "import openai4s.kernel.worker as w\n"
        "after = (signal.getsignal(signal.SIGINT), sorted(os.listdir('/proc/self/fd')))\n"
        "print(before == after, hasattr(sys, '_openai4s_protocol_stdin'), w.signal is signal)\n"
    )
    out = subprocess.run(
        [PYTHON, "-c", probe], env=worker_env(tmp_path), capture_output=True, text=True
    )
    assert out.stdout.strip() == "True False True", out.stderr
