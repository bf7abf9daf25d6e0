"""The terminal REPL: `python -m openai4s repl`.

Three depths: the pure pieces (cell completeness, local commands, tables,
footers, the Ctrl-C forwarding loop against a fake kernel); the whole
program over a pipe (script mode); and one session in a real terminal
under tmux.
"""

import _thread
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from openai4s.cli import commands
from openai4s.cli.cells import COMPLETE, INCOMPLETE, INVALID, CellBuffer, completeness, is_open
from openai4s.cli.render import Console, format_error, format_usage
from openai4s.cli.runner import KILL_AFTER_PRESSES, CellFailed, run_cell
from openai4s.cli.variables import format_variables
from repl_support import TmuxPane, descendants, gone

_SUBPROCESS_TIMEOUT_S = 60


def feed(lines):
    """Push `lines` into a fresh buffer; the cells completed along the way
    and the buffer, for checking what is still pending."""
    buffer = CellBuffer()
    cells = []
    for line in lines:
        cell = buffer.push(line)
        while cell is not None:
            cells.append(cell)
            cell = buffer.take_ready()
    return cells, buffer


# -- cell completeness --------------------------------------------------------


def test_completeness_classifies_with_codeop():
    assert completeness("x = 1") == COMPLETE
    assert completeness("for i in x:") == INCOMPLETE
    assert completeness("x = (1,") == INCOMPLETE
    assert completeness("x = = 1") == INVALID


def test_is_open_only_inside_brackets_strings_and_continuations():
    assert is_open("x = (1,")
    assert is_open('s = """a')
    assert is_open("x = 1 + \\")
    assert not is_open("for i in x:")
    assert not is_open("x = 1")


def test_a_complete_line_is_a_cell_at_once():
    assert feed(["x = 1"])[0] == ["x = 1"]
    assert feed(["if x: pass"])[0] == ["if x: pass"]


def test_an_invalid_first_line_goes_to_the_kernel_to_be_reported():
    assert feed(["x = = 1"])[0] == ["x = = 1"]


def test_blank_lines_between_cells_are_ignored():
    cells, buffer = feed(["", "   ", "x = 1", ""])
    assert cells == ["x = 1"]
    assert not buffer.pending


def test_a_block_runs_when_the_next_statement_arrives():
    cells, buffer = feed(["for i in range(3):", "    print(i)", ""])
    assert cells == [] and buffer.pending
    assert buffer.push("x = 1") == "for i in range(3):\n    print(i)"
    # The line that ended the block is a cell of its own, ready at once.
    assert buffer.take_ready() == "x = 1"
    assert not buffer.pending


def test_blank_lines_inside_a_function_are_content():
    script = ["def f():", "    a = 1", "", "    return a", "", "", "print(f())"]
    assert feed(script)[0] == ["def f():\n    a = 1\n\n    return a", "print(f())"]


def test_continuations_and_comments_stay_in_the_block():
    cells, buffer = feed(["if x:", "    a = 1", "# note", "else:", "    a = 2", ""])
    assert cells == []
    assert buffer.flush() == "if x:\n    a = 1\n# note\nelse:\n    a = 2"
    cells, _ = feed(["try:", "    f()", "except E:", "    pass", "y = 2"])
    assert cells == ["try:\n    f()\nexcept E:\n    pass", "y = 2"]


def test_a_comment_alone_is_not_a_cell():
    assert feed(["# setup", "x = 1"])[0] == ["x = 1"]


def test_a_bracketed_statement_ends_when_it_closes():
    assert feed(["x = (1,", "2)"])[0] == ["x = (1,\n2)"]


def test_a_backslash_continuation_ends_when_complete():
    assert feed(["x = 1 + \\", "2"])[0] == ["x = 1 + \\\n2"]


def test_a_blank_line_inside_a_string_or_bracket_is_content():
    assert feed(['s = """a', "", 'b"""'])[0] == ['s = """a\n\nb"""']
    assert feed(["x = [1,", "", "2]"])[0] == ["x = [1,\n\n2]"]


def test_a_decorated_function_is_one_cell():
    cells, buffer = feed(["@decorator", "def f():", "    return 1", ""])
    assert cells == [] and buffer.pending
    assert buffer.push("f()") == "@decorator\ndef f():\n    return 1"


def test_a_block_without_a_body_is_sent_for_the_kernel_to_report():
    cells, buffer = feed(["for i in x:", "print(1)", "y = 2"])
    assert cells == ["for i in x:\nprint(1)", "y = 2"]


def test_flush_returns_the_partial_cell_at_end_of_input():
    _, buffer = feed(["for i in range(2):", "    print(i)"])
    assert buffer.flush() == "for i in range(2):\n    print(i)"
    assert buffer.flush() is None


def test_reset_discards_the_partial_cell():
    _, buffer = feed(["while True:"])
    buffer.reset()
    assert not buffer.pending
    assert buffer.push("x = 1") == "x = 1"


# -- local commands ---------------------------------------------------------


@pytest.mark.parametrize("text", ["exit", "quit", "exit()", "quit()", "%exit", "  exit  "])
def test_exit_words_leave_locally(text):
    assert commands.classify(text) == commands.EXIT


@pytest.mark.parametrize(
    "text,command",
    [("%vars", commands.VARS), ("%restart", commands.RESTART), ("%help", commands.HELP)],
)
def test_magics_are_recognised(text, command):
    assert commands.classify(text) == command


@pytest.mark.parametrize("text", ["exit(3)", "x = exit", "print('exit')", "quit = 1", ""])
def test_other_text_is_code_for_the_kernel(text):
    assert commands.classify(text) is None


def test_an_unknown_magic_is_refused():
    with pytest.raises(commands.UnknownMagic, match="%nope"):
        commands.classify("%nope 1 2")


# -- rendering --------------------------------------------------------------


def test_variables_table_has_a_row_per_variable():
    table = format_variables(
        {
            "variables": [
                {"name": "count", "type": "int", "kind": "scalar", "preview": 41},
                {"name": "title", "type": "str", "kind": "text", "length": 7, "preview": "protein"},
                {"name": "nothing", "type": "NoneType", "kind": "scalar", "preview": None},
                {"name": "rows", "type": "list", "kind": "container", "length": 2},
                {"name": "f", "type": "function"},
            ],
            "truncated": False,
        }
    )
    lines = table.splitlines()
    assert lines[0].split() == ["Name", "Type", "Size", "Value"]
    assert lines[1].split() == ["count", "int", "41"]
    assert lines[2].split() == ["title", "str", "7", "'protein'"]
    assert lines[3].split() == ["nothing", "NoneType", "None"]
    assert lines[4].split() == ["rows", "list", "2"]
    assert lines[5].split() == ["f", "function"]
    assert len(lines) == 6


def test_variables_table_shortens_long_values_and_notes_truncation():
    table = format_variables(
        {
            "variables": [{"name": "s", "type": "str", "kind": "text", "preview": "x" * 500}],
            "truncated": True,
        }
    )
    row = table.splitlines()[1]
    assert row.endswith("…") and len(row) < 100
    assert "only the first 1 variables" in table


def test_an_empty_namespace_says_so():
    assert format_variables({"variables": [], "truncated": False}) == "(no variables)\n"


def test_usage_footer_only_for_slow_cells():
    assert format_usage({"wall_s": 0.2, "cpu_s": 0.1, "peak_rss_kb": 1000}) is None
    assert format_usage({}) is None
    assert format_usage(None) is None
    footer = format_usage({"wall_s": 2.5, "cpu_s": 1.25, "peak_rss_kb": 2048})
    assert footer == "[wall 2.50 s, cpu 1.25 s, peak RSS 2.0 MB]\n"


def test_error_text_gets_a_trailing_newline():
    assert format_error({"error": None}) is None
    assert format_error({"error": "Interrupted"}) == "Interrupted\n"
    assert format_error({"error": "Traceback\n"}) == "Traceback\n"


class _Stream:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def write(self, text):
        self.log.append((self.name, text))

    def flush(self):
        pass


def _console(interactive):
    log = []
    return Console(_Stream(log, "out"), _Stream(log, "err"), interactive), log


def test_terminal_messages_start_on_a_fresh_line():
    console, log = _console(interactive=True)
    console.chunk("a")
    console.message("boom\n")
    assert log == [("out", "a"), ("out", "\n"), ("err", "boom\n")]


def test_output_after_an_echoed_ctrl_c_starts_on_a_fresh_line():
    console, log = _console(interactive=True)
    console.cursor_moved()
    console.chunk("x\n")
    assert log == [("out", "\n"), ("out", "x\n")]


def test_piped_output_is_verbatim():
    console, log = _console(interactive=False)
    console.chunk("a")
    console.message("boom\n")
    assert log == [("out", "a"), ("err", "boom\n")]


# -- Ctrl-C forwarding ----------------------------------------------------------


class _BlockingKernel:
    """Stands in for Kernel: `execute` blocks until interrupted or killed;
    `interrupt()` works only when `responsive`."""

    def __init__(self, responsive=True):
        self.responsive = responsive
        self.interrupts = 0
        self.killed = False
        self._stop = threading.Event()

    def execute(self, code, on_chunk=None):
        on_chunk("started\n")
        if not self._stop.wait(10):
            return {"error": None, "interrupted": False}
        if self.killed:
            raise RuntimeError("kernel worker exited unexpectedly")
        return {"error": "Interrupted", "interrupted": True}

    def interrupt(self):
        self.interrupts += 1
        if self.responsive:
            self._stop.set()
        return True

    def kill_worker(self):
        self.killed = True
        self._stop.set()


def _press_ctrl_c(times, after):
    """Simulate Ctrl-C: raise KeyboardInterrupt in the main thread, as the
    SIGINT handler does, once the cell is running."""

    def press():
        for _ in range(times):
            after.wait(5)
            time.sleep(0.2)
            _thread.interrupt_main()

    threading.Thread(target=press, daemon=True).start()


@pytest.fixture
def default_sigint():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("KeyboardInterrupt simulation needs the main thread")
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT does not raise KeyboardInterrupt in this process")


def test_ctrl_c_while_a_cell_runs_interrupts_the_kernel(default_sigint):
    kernel = _BlockingKernel()
    started = threading.Event()
    seen = []
    _press_ctrl_c(1, started)
    result = run_cell(
        kernel,
        "busy()",
        lambda text: started.set(),
        lambda presses, delivery: seen.append((presses, delivery)),
    )
    assert result["interrupted"] is True
    assert kernel.interrupts == 1 and not kernel.killed
    assert seen == [(1, True)]


def test_a_kernel_that_ignores_interrupts_is_killed_on_the_last_press(default_sigint):
    kernel = _BlockingKernel(responsive=False)
    started = threading.Event()
    seen = []
    _press_ctrl_c(KILL_AFTER_PRESSES, started)
    with pytest.raises(CellFailed, match="exited unexpectedly"):
        run_cell(
            kernel,
            "stuck()",
            lambda text: started.set(),
            lambda presses, delivery: seen.append((presses, delivery)),
        )
    assert kernel.interrupts == KILL_AFTER_PRESSES - 1 and kernel.killed
    assert seen[-1] == (KILL_AFTER_PRESSES, None)


# -- the program over a pipe --------------------------------------------------


def run_repl(tmp_path, script, *args, env=None):
    env = dict(os.environ, HOME=str(tmp_path), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "openai4s", "repl", *args],
        input=script,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=_SUBPROCESS_TIMEOUT_S,
    )


def test_script_runs_cells_and_streams_their_output(tmp_path):
    script = (
        "x = 41\n"
        "x + 1\n"
        "for i in range(3):\n"
        "    print('item', i)\n"
        "\n"
        "import os\n"
        "print('cwd', os.getcwd())\n"
    )
    proc = run_repl(tmp_path, script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["42", "item 0", "item 1", "item 2", f"cwd {tmp_path}"]
    assert proc.stderr == ""


def test_cells_run_as_their_lines_arrive_and_no_process_outlives_the_repl(tmp_path):
    repl = subprocess.Popen(
        [sys.executable, "-m", "openai4s", "repl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, HOME=str(tmp_path)),
    )
    try:
        repl.stdin.write("print('ready')\n")
        repl.stdin.flush()
        # Answered before stdin is closed: cells are not held back to EOF.
        assert repl.stdout.readline() == "ready\n"
        kernel_processes = descendants(repl.pid)
        assert kernel_processes, "the kernel worker is not a descendant of the REPL"
        repl.stdin.close()
        assert repl.wait(timeout=_SUBPROCESS_TIMEOUT_S) == 0
        leftovers = [pid for pid in kernel_processes if not gone(pid)]
        assert leftovers == [], "processes outlived the REPL"
    finally:
        if repl.poll() is None:
            repl.kill()
            repl.wait()
        repl.stdout.close()
        repl.stderr.close()


def test_a_failing_cell_reports_and_sets_the_exit_status(tmp_path):
    script = "print('before')\n1 / 0\nimport sys; print('warn', file=sys.stderr)\nprint('after')\n"
    proc = run_repl(tmp_path, script)
    assert proc.returncode == 1
    assert proc.stdout == "before\nafter\n"
    assert "Traceback (most recent call last)" in proc.stderr
    assert "ZeroDivisionError: division by zero" in proc.stderr
    assert proc.stderr.rstrip().endswith("warn")


_ANALYSIS_SCRIPT = """\
import statistics

# A helper with blank lines inside, as scripts have them.
def summarise(values):
    mean = statistics.mean(values)

    spread = max(values) - min(values)

    return mean, spread


class Sample:
    def __init__(self, values):
        self.values = values

    def report(self):
        return "mean %.1f, spread %d" % summarise(self.values)


if __name__ == "__main__":
    print(Sample([1, 2, 6]).report())
"""


def test_a_script_with_blank_lines_in_functions_runs_piped_and_with_run(tmp_path):
    script = tmp_path / "analysis.py"
    script.write_text(_ANALYSIS_SCRIPT)
    piped = run_repl(tmp_path, _ANALYSIS_SCRIPT)
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, "mean 3.0, spread 5\n", "")
    ran = subprocess.run(
        [sys.executable, "-m", "openai4s", "run", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, HOME=str(tmp_path)),
        timeout=_SUBPROCESS_TIMEOUT_S,
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "mean 3.0, spread 5\n", "")


def test_run_stops_at_the_first_failure_and_says_so_by_exit_code(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("print('before')\n\ndef f():\n\n    return 1 / 0\n\nf()\nprint('after')\n")
    ran = subprocess.run(
        [sys.executable, "-m", "openai4s", "run", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, HOME=str(tmp_path)),
        timeout=_SUBPROCESS_TIMEOUT_S,
    )
    assert (ran.returncode, ran.stdout) == (1, "before\n")
    assert "ZeroDivisionError: division by zero" in ran.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "openai4s", "run", str(tmp_path / "nope.py")],
        capture_output=True,
        text=True,
        timeout=_SUBPROCESS_TIMEOUT_S,
    )
    assert missing.returncode == 2 and "nope.py" in missing.stderr


def test_a_file_outside_the_sandbox_gets_a_one_line_hint(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    outside = tmp_path / "data" / "counts.csv"
    outside.parent.mkdir()
    outside.write_text("a,b\n")
    script = f"open({str(outside)!r})\nopen('/no/such/file.csv')\n"
    env = {"OPENAI4S_KERNEL_SANDBOX": "enforce"}
    proc = run_repl(tmp_path, script, "--cwd", str(workspace), env=env)
    if "could not start the kernel" in proc.stderr:
        pytest.skip(f"no sandbox here: {proc.stderr.strip()}")
    hints = [line for line in proc.stderr.splitlines() if line.startswith("hint:")]
    # Only the file that exists on this machine gets one.
    assert hints == [
        f"hint: {outside} exists on this machine but is outside the sandbox; copy it into the "
        f"workspace ({workspace}) or add its directory to OPENAI4S_KERNEL_SANDBOX_READ_PATHS"
    ]
    allowed = dict(env, OPENAI4S_KERNEL_SANDBOX_READ_PATHS=str(outside.parent))
    proc = run_repl(tmp_path, f"print(open({str(outside)!r}).read())\n", env=allowed)
    assert (proc.returncode, proc.stdout) == (0, "a,b\n\n"), proc.stderr


def test_an_unattended_refusal_is_one_line_saying_how_to_allow(tmp_path):
    env_free = {"OPENAI4S_UNATTENDED_APPROVAL": ""}
    proc = run_repl(tmp_path, "host.bash('echo hi')\nprint('next')\n", env=env_free)
    assert (proc.returncode, proc.stdout) == (1, "next\n")
    assert proc.stderr == (
        "PermissionError: host.bash needs approval and nobody can be asked here (unattended):"
        " echo hi -- allow it with OPENAI4S_UNATTENDED_APPROVAL=allow or a standing allow rule\n"
    )


def test_vars_shows_the_shape_and_dtype_of_arrays(tmp_path):
    pytest.importorskip("numpy")
    script = "import numpy as np\ngrid = np.zeros((3, 4))\nlabels = np.array(['a', 'b'])\n%vars\n"
    proc = run_repl(tmp_path, script)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1:3] for line in proc.stdout.splitlines()[1:]}
    assert rows["grid"] == ["ndarray[float64]", "3x4"]
    assert rows["labels"] == ["ndarray[str32]", "2"]


def test_make_help_lists_the_targets():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run(
        ["make", "-s", "-C", root, "help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    targets = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert {"run", "test", "jupyter", "setup", "help"} <= set(targets)
    # `make` alone says the same.
    plain = subprocess.run(["make", "-s", "-C", root], capture_output=True, text=True, timeout=60)
    assert plain.stdout == done.stdout


def test_vars_lists_the_namespace(tmp_path):
    script = "count = 41\ntitle = 'protein'\nrows = [1, 2, 3]\n%vars\n"
    proc = run_repl(tmp_path, script)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["Name", "Type", "Size", "Value"]
    assert ["count", "int", "41"] in [line.split() for line in lines]
    assert ["title", "str", "7", "'protein'"] in [line.split() for line in lines]
    assert ["rows", "list", "3", "[1,", "2,", "3]"] in [line.split() for line in lines]


def test_exit_words_stop_the_script_and_kernel_exit_is_trapped(tmp_path):
    proc = run_repl(tmp_path, "print(1)\nexit()\nprint(2)\n")
    assert (proc.returncode, proc.stdout) == (0, "1\n")
    proc = run_repl(tmp_path, "x = 5\nexit(3)\nprint(x)\n")
    assert proc.returncode == 1
    assert proc.stdout == "5\n"
    assert "SystemExit trapped" in proc.stderr


def test_restart_clears_the_namespace(tmp_path):
    proc = run_repl(tmp_path, "x = 1\n%restart\nprint('x' in globals())\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "False\n"
    assert "restarted" in proc.stderr


def test_a_dead_worker_is_replaced(tmp_path):
    proc = run_repl(tmp_path, "import os\nos._exit(1)\nprint('alive')\n")
    assert proc.returncode == 1
    assert proc.stdout == "alive\n"
    # REPL words: no API advice ("call restart()") when the REPL restarts.
    assert proc.stderr.splitlines() == [
        "kernel error: kernel worker exited unexpectedly (exit status 1)",
        "The kernel died; starting a fresh one (variables are lost).",
    ]


def test_api_advice_is_said_in_repl_words():
    from openai4s.cli.render import repl_words
    from openai4s.kernel.errors import KernelProtocolError, KernelRestartFailed

    assert str(KernelProtocolError("out of step")).endswith("call restart()")
    assert repl_words(str(KernelProtocolError("out of step"))) == (
        "out of step; if the next request fails too, type %restart"
    )
    assert "type %restart again" in repl_words(str(KernelRestartFailed("no python")))


def test_usage_footer_appears_only_for_slow_cells(tmp_path):
    proc = run_repl(tmp_path, "import time\ntime.sleep(1.2)\nprint('quick')\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "quick\n"
    assert re.fullmatch(r"\[wall 1\.\d\d s, cpu \d+\.\d\d s, peak RSS [\d.]+ MB\]\n", proc.stderr)


def test_last_block_runs_without_a_trailing_blank_line(tmp_path):
    proc = run_repl(tmp_path, "for i in range(2):\n    print(i)")
    assert (proc.returncode, proc.stdout) == (0, "0\n1\n")


def test_unknown_magic_is_an_error_message_not_a_cell(tmp_path):
    proc = run_repl(tmp_path, "%nope\nprint('ok')\n")
    assert (proc.returncode, proc.stdout) == (1, "ok\n")
    assert "unknown magic %nope" in proc.stderr


def test_help_magic_lists_the_magics(tmp_path):
    proc = run_repl(tmp_path, "%help\n")
    assert proc.returncode == 0
    assert all(magic in proc.stdout for magic in ("%vars", "%restart", "%exit", "Ctrl-C"))


def test_help_of_the_program_and_of_repl(tmp_path):
    top = subprocess.run(
        [sys.executable, "-m", "openai4s", "--help"],
        capture_output=True,
        text=True,
        timeout=_SUBPROCESS_TIMEOUT_S,
    )
    assert top.returncode == 0 and "repl" in top.stdout
    repl = subprocess.run(
        [sys.executable, "-m", "openai4s", "repl", "--help"],
        capture_output=True,
        text=True,
        timeout=_SUBPROCESS_TIMEOUT_S,
    )
    assert repl.returncode == 0
    assert "--cwd" in repl.stdout and "--mode" in repl.stdout
    assert "%vars" in repl.stdout and "%%" not in repl.stdout


def test_a_missing_cwd_is_a_usage_error(tmp_path):
    proc = run_repl(tmp_path, "", "--cwd", str(tmp_path / "absent"))
    assert proc.returncode == 2
    assert "not a directory" in proc.stderr


def test_cwd_option_sets_the_kernel_directory(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    proc = run_repl(tmp_path, "import os\nprint(os.getcwd())\n", "--cwd", str(work))
    assert (proc.returncode, proc.stdout) == (0, f"{work}\n")


# -- a real terminal ------------------------------------------------------------


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_interactive_session_in_a_real_terminal(tmp_path):
    pane = TmuxPane(tmp_path)
    repl_pid = None
    try:
        pane.start(["env", f"HOME={tmp_path}", sys.executable, "-m", "openai4s", "repl"])
        repl_pid = pane.program_pid()
        pane.wait_for_text("In [1]:")

        pane.send("x = 41", "Enter")
        pane.wait_for_text("In [2]:")
        pane.send("import time", "Enter")
        pane.wait_for_text("In [3]:")
        kernel_processes = descendants(repl_pid)
        assert kernel_processes, "the kernel worker is not a descendant of the REPL"

        # Output streams while the cell runs: the first line shows before
        # the last is printed.
        pane.send("for i in range(3):", "Enter", "    print('tick', i); time.sleep(1)", "Enter")
        pane.wait_for_text("...:")
        pane.send("Enter")
        early = pane.wait_for_text("tick 0")
        assert "tick 2" not in early and "In [4]:" not in early
        pane.wait_for_text("In [4]:")

        pane.send("time.sleep(30)", "Enter")
        # The line is echoed before the cell starts; give it a moment to run.
        # (Keys are sent only at a prompt: Ctrl-C flushes typed-ahead input.)
        pane.wait_for_text("In [4]: time.sleep(30)")
        time.sleep(0.5)
        interrupted_at = time.monotonic()
        pane.send("C-c")
        pane.wait_for_text("Interrupted", timeout=10)
        assert time.monotonic() - interrupted_at < 10
        pane.wait_for_text("In [5]:")

        pane.send("x + 1", "Enter")
        pane.wait_for(lambda text: re.search(r"In \[5\]: x \+ 1\n42\n", text), "x + 1 == 42")
        pane.wait_for_text("In [6]:")

        pane.send("%vars", "Enter")
        pane.wait_for(lambda text: re.search(r"\nx\s+int\s+41\n", text), "x in %vars")
        # %vars is not a cell: the next prompt keeps the cell number.
        pane.wait_for(lambda text: text.count("In [6]:") == 2, "a second In [6] prompt")

        pane.send("C-d")
        deadline = time.monotonic() + 15
        while pane.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pane.exit_status() == 0
        assert gone(repl_pid), "the REPL process is still running"
        leftovers = [pid for pid in kernel_processes if not gone(pid)]
        assert leftovers == [], "processes outlived the REPL"
        history = (tmp_path / ".openai4s" / "repl_history").read_text()
        assert "x = 41" in history and "%vars" in history
    finally:
        pane.kill_server()
        if repl_pid is not None and not gone(repl_pid, timeout=0):
            os.kill(repl_pid, signal.SIGKILL)


@pytest.mark.skipif(
    shutil.which("tmux") is None or shutil.which("make") is None, reason="needs tmux and make"
)
def test_ctrl_c_under_make_leaves_make_with_status_zero(tmp_path):
    # `make run` puts make in the terminal's foreground group with the REPL;
    # make dies of a Ctrl-C once its child is done unless the key reaches the
    # REPL alone.
    makefile = tmp_path / "Makefile"
    makefile.write_text(f"run:\n\t@{sys.executable} -m openai4s repl --cwd {tmp_path}\n")
    pane = TmuxPane(tmp_path)
    try:
        pane.start(["env", f"HOME={tmp_path}", "make", "-s", "-f", str(makefile), "run"])
        pane.wait_for_text("In [1]:")
        pane.send("C-c")
        pane.send("import time", "Enter")
        pane.wait_for_text("In [2]:")
        pane.send("time.sleep(30)", "Enter")
        pane.wait_for_text("In [2]: time.sleep(30)")
        time.sleep(0.5)
        pane.send("C-c")
        pane.wait_for_text("Interrupted", timeout=10)
        pane.wait_for_text("In [3]:")
        pane.send("C-d")
        deadline = time.monotonic() + 15
        while pane.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pane.exit_status() == 0, pane.text()
    finally:
        pane.kill_server()


def _paste(pane, text):
    # -p: bracketed paste, as a terminal sends a paste when the program asked
    # for it (prompt_toolkit does).
    pane.tmux("set-buffer", "--", text)
    pane.tmux("paste-buffer", "-p", "-t", "repl")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_editor_paste_shortcuts_approval_and_cell_numbers(tmp_path):
    pane = TmuxPane(tmp_path)
    try:
        env = ["env", f"HOME={tmp_path}", "OPENAI4S_UNATTENDED_APPROVAL=allow"]
        pane.start([*env, sys.executable, "-m", "openai4s", "repl", "--cwd", str(tmp_path)])
        pane.wait_for_text("In [1]:")

        # A pasted function with a blank line inside stays one cell.
        _paste(pane, "def f():\n    a = 20\n\n    return a + 1\n")
        pane.send("Enter")
        pane.wait_for_text("In [2]:")
        pane.send("print(f() * 2)", "Enter")
        pane.wait_for(lambda text: "\n42\n" in text, "f() * 2")
        pane.wait_for_text("In [3]:")

        # The prompt number is the traceback's cell number.
        pane.send("1 / 0", "Enter")
        pane.wait_for_text("ZeroDivisionError")
        assert "<kernel:3>" in pane.text()
        pane.wait_for_text("In [4]:")

        pane.send("!echo from-the-shell", "Enter")
        pane.wait_for(lambda text: "\nfrom-the-shell\n" in text, "shell output")
        pane.wait_for_text("In [5]:")
        pane.send("%time sum(range(10))", "Enter")
        pane.wait_for_text("Wall time:")
        pane.wait_for_text("In [6]:")

        # A host call that needs approval asks here even when an unattended
        # policy is set: a person is present. "a" stands for the session.
        pane.send("print(host.bash('echo approved')['stdout'].strip())", "Enter")
        pane.wait_for_text("[y]es once / [a]lways this session / [N]o")
        pane.send("a", "Enter")
        pane.wait_for(lambda text: "\napproved\n" in text, "the approved command's output")
        pane.wait_for_text("In [7]:")
        pane.send("print(host.bash('echo approved')['stdout'].strip())", "Enter")
        pane.wait_for(lambda text: text.count("\napproved\n") == 2, "the second run, unasked")
        assert pane.text().count("[y]es once") == 1
        pane.wait_for_text("In [8]:")
        pane.send("host.bash('echo refused')", "Enter")
        # (Keys typed before the question shows would go to the next prompt.)
        pane.wait_for(lambda text: text.count("[y]es once") == 2, "the second approval prompt")
        pane.send("n", "Enter")
        pane.wait_for_text("In [9]:")
        # A refusal is one line in the cell, not a traceback through the SDK.
        answer = pane.text().rsplit("[N]o:", 1)[1]
        refusal = answer.split("In [9]:")[0].strip().splitlines()
        assert refusal[1:] == ["PermissionError: host.bash was denied by the user: echo refused"]

        pane.send("C-d")
        deadline = time.monotonic() + 15
        while pane.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pane.exit_status() == 0
        # The audit log tells who decided each call: the user twice, then the
        # session rule their "always" left.
        audit = subprocess.run(
            [sys.executable, "-m", "openai4s", "audit", "--json", "--tool", "bash"],
            capture_output=True,
            text=True,
            env=dict(os.environ, HOME=str(tmp_path)),
            timeout=_SUBPROCESS_TIMEOUT_S,
        )
        rows = [json.loads(line) for line in audit.stdout.splitlines()]
        assert [(r["what"], r["decided_by"], r["outcome"]) for r in rows] == [
            ("echo refused", "user", "denied"),
            ("echo approved", "rule", "exit 0"),
            ("echo approved", "user", "exit 0"),
        ]
    finally:
        pane.kill_server()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_tab_completion_help_input_and_figures_in_a_terminal(tmp_path):
    pane = TmuxPane(tmp_path)
    try:
        pane.start(
            [
                "env",
                f"HOME={tmp_path}",
                sys.executable,
                "-m",
                "openai4s",
                "repl",
                "--cwd",
                str(tmp_path),
            ]
        )
        first = pane.wait_for_text("In [1]:")
        # The banner names the workspace and the sandbox's state.
        assert f"Workspace: {tmp_path}\n" in first
        assert re.search(r"\nSandbox: (on \(bubblewrap\)|off|degraded)", first), first
        pane.send("distinctive_variable_name = 7", "Enter")
        pane.wait_for_text("In [2]:")
        # Tab completes through the kernel's complete request.
        pane.send("print(distinctive_var", "Tab")
        pane.wait_for_text("print(distinctive_variable_name")
        pane.send(")", "Enter")
        pane.wait_for(lambda text: "\n7\n" in text, "the completed name's value")
        pane.wait_for_text("In [3]:")

        pane.send("def documented():", "Enter", '"""Says what it is for."""', "Enter", "Enter")
        pane.wait_for_text("In [4]:")
        pane.send("documented?", "Enter")
        pane.wait_for_text("Says what it is for.")

        # input() in a cell is answered at this terminal.
        pane.send("answer = input('your name? ')", "Enter")
        # The echoed line holds the prompt text too: wait for input()'s own.
        pane.wait_for(lambda text: text.count("your name?") >= 2, "input()'s prompt")
        pane.send("Ada", "Enter")
        pane.wait_for_text("In [5]:")
        pane.send("print('hello', answer)", "Enter")
        pane.wait_for_text("hello Ada")
        pane.wait_for_text("In [6]:")

        # A figure is saved under the workspace and its path printed.
        pane.send("import matplotlib.pyplot as plt; plt.plot([1, 2, 3]); plt.show()", "Enter")
        pane.wait_for_text("[figure: ", timeout=60)
        figures = list((tmp_path / ".openai4s" / "figures").glob("*.png"))
        assert figures and figures[0].read_bytes().startswith(b"\x89PNG")
        pane.send("C-d")
        deadline = time.monotonic() + 15
        while pane.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pane.exit_status() == 0
    finally:
        pane.kill_server()
