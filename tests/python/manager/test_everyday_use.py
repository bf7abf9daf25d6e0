"""Issue 12 through the real manager and real workers: interrupts that stay
in their cell, the last value shown, child output, errors that say what to
do, and execute(timeout=)."""

import threading
import time

import pytest

import openai4s
from openai4s import kernel as kernel_pkg
from openai4s.kernel import (
    Kernel,
    KernelBusyError,
    KernelDiedError,
    KernelError,
    KernelNotAliveError,
    KernelTimeoutError,
)


def _interrupt_while_sleeping(kernel, seconds=30):
    reached = threading.Event()
    kernel.dispatcher = lambda method, args: reached.set() or "pong"
    box = {}

    def run():
        box["r"] = kernel.execute(f"host._call('ping', [])\nimport time\ntime.sleep({seconds})")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert reached.wait(60), "the cell never reached user code"
    time.sleep(0.05)
    assert kernel.interrupt()
    thread.join(30)
    assert not thread.is_alive()
    assert box["r"]["interrupted"] is True
    return box["r"]


def _not_interrupted(kernel, code):
    result = kernel.execute(code)
    assert result["error"] is None and result["interrupted"] is False, (code, result)
    return result


def test_after_an_interrupt_later_blocking_cells_run_to_completion(kernel):
    # The reproducer, repeated: each later cell must sleep in full.
    for _ in range(4):
        _interrupt_while_sleeping(kernel)
        for _ in range(3):
            started = time.monotonic()
            result = _not_interrupted(kernel, "import time; time.sleep(0.5); 'done'")
            assert result["stdout"] == "'done'\n"
            assert time.monotonic() - started >= 0.5
        _not_interrupted(kernel, "import threading; threading.Event().wait(0.5)")
        _not_interrupted(kernel, "import subprocess; subprocess.run(['sleep', '0.5']);")


def test_an_interrupt_sent_while_idle_does_not_poison_the_next_cell(kernel):
    kernel.execute("pass")
    for _ in range(5):
        kernel.interrupt()
        time.sleep(0.02)
        _not_interrupted(kernel, "import time\nx = 1\ntime.sleep(0.3)\nx")


def test_the_last_expression_of_a_cell_is_shown(kernel):
    assert kernel.execute("x = 1\nx + 1")["stdout"] == "2\n"
    assert kernel.execute("x + 1;")["stdout"] == ""
    assert kernel.execute("None")["stdout"] == ""


def test_child_output_streams_through_on_chunk(kernel):
    seen = []
    result = kernel.execute(
        "import os, subprocess\nprint('a')\nsubprocess.run(['echo', 'hi'])\nos.system('echo sys')\nprint('b');",
        on_chunk=seen.append,
    )
    assert result["stdout"] == "a\nhi\nsys\nb\n"
    assert "".join(seen) == result["stdout"]


def test_a_crash_in_a_cell_is_reported_with_its_last_words(kernel):
    with pytest.raises(KernelDiedError, match="exited unexpectedly") as caught:
        kernel.execute("import ctypes\nctypes.string_at(0)")
    assert "Segmentation fault" in str(caught.value)
    assert "call restart()" in str(caught.value)
    # The crash report (faulthandler on the worker's own stderr) is also kept.
    assert any("Segmentation fault" in line for line in kernel.worker_log_tail)
    with pytest.raises(KernelNotAliveError, match="not alive.*call restart()"):
        kernel.execute("1")
    kernel.restart()
    assert kernel.execute("40 + 2")["stdout"] == "42\n"


def test_execute_rejects_code_that_is_not_a_str(kernel):
    for bad in (b"print(1)", None, 42, ["x"]):
        with pytest.raises(TypeError, match="code must be a str"):
            kernel.execute(bad)
    assert kernel.execute("print('still usable')")["stdout"] == "still usable\n"


def test_execute_rejects_lone_surrogates_clearly(kernel):
    with pytest.raises(ValueError, match="lone surrogate.*U\\+D800"):
        kernel.execute("x = '\ud800'")
    assert kernel.execute("'ok'")["stdout"] == "'ok'\n"


def test_a_syntax_error_shows_only_the_users_code(kernel):
    error = kernel.execute("x = (1 +")["error"]
    assert "During handling" not in error and "worker.py" not in error
    assert error.startswith('  File "<kernel:')
    assert sum(1 for line in error.splitlines() if line.strip().startswith("^")) == 1


def test_a_front_door_names_the_cell_its_user_sees(kernel):
    # The REPL passes its prompt number: `<kernel:N>` is `In [N]` even when
    # cells ran that the user never saw.
    kernel.execute("def g():\n    raise KeyError('k')\n", cell_name="7")
    kernel.execute("pass")
    error = kernel.execute("g()", cell_name="9")["error"]
    assert '"<kernel:7>", line 2' in error and '"<kernel:9>", line 1' in error


def test_a_timeout_interrupts_the_cell_and_says_so(kernel):
    kernel.execute("survivor = 1")
    started = time.monotonic()
    result = kernel.execute("import time\ntime.sleep(30)", timeout=1)
    assert time.monotonic() - started < 20
    assert result["interrupted"] is True and result["timed_out"] is True
    assert "timeout" in result["error"]
    # The kernel and its namespace survive; a fast cell is not marked.
    result = kernel.execute("survivor", timeout=30)
    assert result["stdout"] == "1\n" and "timed_out" not in result


def test_a_cell_that_ignores_the_interrupt_is_killed_after_the_grace(kernel, monkeypatch):
    from openai4s.kernel import cell_timeout

    monkeypatch.setattr(cell_timeout, "KILL_GRACE_S", 1.0)
    code = (
        "import time\n"
        "while True:\n"
        "    try:\n"
        "        time.sleep(30)\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
    )
    with pytest.raises(KernelTimeoutError, match="timeout.*killed.*call restart()"):
        kernel.execute(code, timeout=0.5)
    assert not kernel.is_alive()
    kernel.restart()
    assert kernel.execute("1 + 1")["stdout"] == "2\n"


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "5", True])
def test_a_bad_timeout_is_refused_before_anything_runs(kernel, bad):
    with pytest.raises((TypeError, ValueError), match="timeout"):
        kernel.execute("x = 1", timeout=bad)


def test_exception_classes_are_exported_and_say_what_to_do():
    for name in ("KernelDiedError", "KernelBusyError", "KernelNotAliveError", "KernelTimeoutError"):
        cls = getattr(openai4s, name)
        assert cls is getattr(kernel_pkg, name)
        assert issubclass(cls, KernelError) and issubclass(cls, RuntimeError)
    assert "call restart()" in str(KernelDiedError("kernel worker exited unexpectedly"))
    assert "interrupt()" in str(KernelBusyError("kernel worker is busy"))
    assert issubclass(KernelTimeoutError, TimeoutError)


def test_inspection_while_busy_says_what_to_do(kernel):
    reached = threading.Event()
    kernel.dispatcher = lambda method, args: reached.set() or "pong"
    thread = threading.Thread(
        target=kernel.execute, args=("host._call('ping', [])\nimport time\ntime.sleep(2)",)
    )
    thread.start()
    try:
        assert reached.wait(60)
        with pytest.raises(KernelBusyError, match="busy.*interrupt()"):
            kernel.inspect_variables()
    finally:
        thread.join(30)


@pytest.mark.parametrize("mode", ["off", "auto", "enforce"])
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_missing_or_non_directory_cwd_says_so(tmp_path, monkeypatch, kind, mode):
    monkeypatch.setenv("OPENAI4S_KERNEL_SANDBOX", mode)
    cwd = tmp_path / "absent"
    if kind == "file":
        cwd.write_text("")
    expected = FileNotFoundError if kind == "missing" else NotADirectoryError
    with pytest.raises(
        expected, match="does not exist" if kind == "missing" else "not a directory"
    ):
        Kernel(cwd=cwd)
