"""fd 1/2 output of child processes and native code joins the Cell's
stdout/stderr (issue 12, point 3): live, in order with print(), never on
the protocol pipe; the worker's own crash report still reaches its stderr."""

import json
import time

import pytest


def test_child_process_and_native_output_land_in_order_with_print(worker):
    code = (
        "import ctypes, os, subprocess\n"
        "print('a')\n"
        "subprocess.run(['echo', 'from-echo'])\n"
        "print('b')\n"
        "os.system('echo from-system')\n"
        "print('c')\n"
        "libc = ctypes.CDLL(None)\n"
        "libc.printf(b'from-printf %d\\n', 42)\n"
        "libc.fflush(None)\n"
        "print('d')\n"
        "os.write(1, b'from-os-write\\n')\n"
        "print('e');"
    )
    response, frames = worker.execute(code)
    assert response["error"] is None, response
    assert response["stdout"] == (
        "a\nfrom-echo\nb\nfrom-system\nc\nfrom-printf 42\nd\nfrom-os-write\ne\n"
    )
    # Streamed as chunks, like print's output.
    streamed = "".join(f["text"] for f in frames if f["type"] == "stdout_chunk")
    assert streamed == response["stdout"]


def test_a_lone_native_write_is_captured(worker):
    response, _ = worker.execute("import os\nos.write(1, b'native-stdout\\n');")
    assert response["stdout"] == "native-stdout\n"
    response, _ = worker.execute("import os\nos.write(2, b'native-stderr\\n');")
    assert response["stderr"] == "native-stderr\n" and response["stdout"] == ""


def test_child_stderr_goes_to_the_cells_stderr(worker):
    code = "import subprocess\nsubprocess.run(['sh', '-c', 'echo out; echo err >&2']);"
    response, _ = worker.execute(code)
    assert response["stdout"] == "out\n"
    assert response["stderr"] == "err\n"


def test_a_long_running_child_streams_live(worker):
    worker.send(
        {
            "type": "execute",
            "id": "live",
            "code": "import subprocess\n"
            "subprocess.run(['sh', '-c', 'echo early; sleep 30; echo late'])",
        }
    )
    # The child's first line arrives while the Cell is still running.
    frame = worker.read(timeout=20)
    while frame["type"] != "stdout_chunk":
        assert frame["type"] != "response", frame
        frame = worker.read(timeout=20)
    assert frame["id"] == "live" and frame["text"] == "early\n"
    worker.interrupt()
    response, _ = worker.collect(timeout=20)
    assert response["interrupted"] is True


def test_native_output_that_looks_like_a_frame_is_just_text(worker):
    fake = json.dumps({"type": "response", "id": "forged", "stdout": "x"}) + "\n"
    code = (
        f"import os, subprocess\nos.write(1, {fake.encode()!r})\n"
        f"subprocess.run(['echo', {fake.strip()!r}])\n'ok'"
    )
    response, frames = worker.execute(code)
    assert response["error"] is None, response
    assert response["stdout"].splitlines()[:2] == [fake.strip()] * 2
    assert response["stdout"].endswith("'ok'\n")
    assert all(f["type"] == "stdout_chunk" for f in frames)


def test_stdout_buffer_and_fileno_work_as_libraries_expect(worker):
    code = (
        "import subprocess, sys, io\n"
        "sys.stdout.buffer.write('caf\\u00e9 '.encode())\n"
        "sys.stdout.buffer.write(b'\\xc3')\n"  # half a character, finished next
        "sys.stdout.buffer.write(b'\\xa9\\n')\n"
        "sys.stdout.buffer.flush()\n"
        "print(sys.stdout.fileno(), sys.stderr.fileno())\n"
        "subprocess.run(['echo', 'via-fileno'], stdout=sys.stdout, stderr=sys.stderr)\n"
        "wrapped = io.TextIOWrapper(sys.stdout.buffer, encoding='utf-8', write_through=True)\n"
        "wrapped.write('wrapped\\n')\n"
        "del wrapped\n"
        "sys.stdout.buffer.write(b'after\\n');"
    )
    response, _ = worker.execute(code)
    assert response["error"] is None, response
    assert response["stdout"] == "caf\u00e9 \u00e9\n1 2\nvia-fileno\nwrapped\nafter\n"


def test_faulthandler_in_a_cell_writes_into_the_cell(worker):
    response, _ = worker.execute(
        "import faulthandler\nfaulthandler.dump_traceback(all_threads=False)"
    )
    assert response["error"] is None, response
    assert '"<kernel:' in response["stderr"]


def test_output_past_the_cap_is_truncated_and_spilled(worker):
    response, _ = worker.execute("import os\nos.system('yes x | head -c 2500000');")
    assert response["error"] is None
    assert "...(truncated at 1000000 characters" in response["stdout"]
    assert response["stdout_file"].endswith(".stdout.txt")


def test_a_crash_inside_a_cell_still_reaches_the_workers_stderr(worker):
    worker.send({"type": "execute", "id": "boom", "code": "import ctypes\nctypes.string_at(0)"})
    while worker.read(timeout=30) is not None:
        pass
    worker.proc.wait(timeout=30)
    worker._drain.join(timeout=10)
    assert "Fatal Python error: Segmentation fault" in worker.stderr
    assert 'File "<kernel:' in worker.stderr


def test_between_cells_fd_1_and_2_are_the_workers_stderr_again(worker):
    response, _ = worker.execute(
        "import os, threading, time\n"
        "def later():\n"
        "    time.sleep(1)\n"
        "    os.write(1, b'after-the-cell\\n')\n"
        "threading.Thread(target=later).start()"
    )
    assert "after-the-cell" not in response["stdout"]
    time.sleep(3)
    worker.shutdown()
    assert "after-the-cell" in worker.stderr


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_invalid_utf8_is_replaced_not_fatal(worker, stream):
    fd = 1 if stream == "stdout" else 2
    response, _ = worker.execute(f"import os\nos.write({fd}, b'bad \\xff byte\\n');")
    assert response[stream] == "bad \ufffd byte\n"
