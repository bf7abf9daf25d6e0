"""The REPL's pure pieces: when Enter runs the editor's buffer, the shortcut
translations (run here in a real interpreter namespace) and the display
writer."""

import base64
import io
import subprocess
import sys

import pytest

from openai4s.cli import magics
from openai4s.cli.cells import next_indent, ready_to_run
from openai4s.cli.displays import DisplayWriter
from openai4s.cli.render import Console


@pytest.mark.parametrize(
    "text, ready",
    [
        ("x = 1", True),
        ("x = = 1", True),  # beyond repair: the kernel reports it
        ("for i in x:", False),
        ("for i in x:\n    print(i)", False),  # an indented last line continues
        ("for i in x:\n    print(i)\n", True),  # a blank line ends the block
        ("for i in x:\n    print(i)\n    ", True),
        ("x = (1,\n2)", True),
        ("x = 1\ny = 2", True),
        ('s = """a\n\n', False),  # a blank line inside a string is content
        ("if x:\n    a\nelse:", False),
        ("def f():\n    a = 1\n\n    return a", False),
        ("@decorator", False),
        ("", True),
    ],
)
def test_ready_to_run(text, ready):
    assert ready_to_run(text) is ready


def test_next_indent_keeps_or_deepens_the_indentation():
    assert next_indent("for i in x:") == "    "
    assert next_indent("    y = 1") == "    "
    assert next_indent("    if y:  ") == "        "
    assert next_indent("x = 1") == ""


def test_shortcuts_are_recognised_and_others_are_not():
    assert magics.translate("!ls -l").kind == "cell"
    assert magics.translate("%time x = 1") == magics.Shortcut("time", "x = 1")
    assert magics.translate("%timeit x + 1").kind == "cell"
    assert magics.translate("np.mean?") == magics.Shortcut("inspect", "np.mean", 0)
    assert magics.translate("f??") == magics.Shortcut("inspect", "f", 1)
    for ordinary in ("x = 1", "a = b?", "print('?')", "?", "!"):
        shortcut = magics.translate(ordinary)
        assert shortcut is None or shortcut.kind != "inspect", ordinary


def _run_in_fresh_interpreter(code):
    script = (
        "ns = {}\n"
        f"exec(compile({code!r}, '<cell>', 'exec'), ns)\n"
        f"print('names', sorted(k for k in ns if k != '__builtins__'))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )


def test_the_shell_cell_runs_the_command_and_adds_no_names():
    done = _run_in_fresh_interpreter(magics.shell_cell("echo hi; exit 3"))
    assert done.stdout.splitlines() == ["hi", "names []"]
    assert "exit status non-zero" in done.stderr


def test_the_timeit_cell_reports_per_loop_time_and_adds_no_names():
    done = _run_in_fresh_interpreter(magics.timeit_cell("sum(range(10))"))
    first, names = done.stdout.splitlines()
    assert " us per loop (best of 5 runs, " in first and names == "names []"


def test_format_time_prefers_the_workers_clock():
    assert magics.format_time({"wall_s": 0.5, "cpu_s": 0.25}, 9.0) == (
        "CPU time: 250 ms, Wall time: 500 ms\n"
    )
    assert magics.format_time(None, 2.0) == "Wall time: 2.00 s\n"


def _console():
    out, err = io.StringIO(), io.StringIO()
    return Console(out, err, interactive=False), out, err


def test_display_writer_saves_images_and_prints_text(tmp_path):
    console, out, err = _console()
    writer = DisplayWriter(str(tmp_path), console)
    png = b"\x89PNG\r\n\x1a\nfake"
    writer({"data": {"image/png": base64.b64encode(png).decode(), "text/plain": "<Figure>"}})
    writer({"data": {"image/png": base64.b64encode(png).decode()}})
    writer({"data": {"text/html": "<b>x</b>", "text/plain": "x"}})
    writer({"type": "clear_output", "wait": False})
    writer({"data": {"image/png": "%%% not base64 %%%"}})
    figures = sorted((tmp_path / ".openai4s" / "figures").iterdir())
    assert [p.name for p in figures] == ["figure-1.png", "figure-2.png"]
    assert figures[0].read_bytes() == png
    assert out.getvalue().splitlines() == [
        f"[figure: {figures[0]}]",
        f"[figure: {figures[1]}]",
        "x",
    ]
    assert "could not be decoded" in err.getvalue()


def test_display_writer_never_overwrites_an_earlier_figure(tmp_path):
    console, out, _ = _console()
    (tmp_path / ".openai4s" / "figures").mkdir(parents=True)
    (tmp_path / ".openai4s" / "figures" / "figure-1.png").write_bytes(b"old")
    DisplayWriter(str(tmp_path), console)(
        {"data": {"image/png": base64.b64encode(b"new").decode()}}
    )
    assert (tmp_path / ".openai4s" / "figures" / "figure-1.png").read_bytes() == b"old"
    assert (tmp_path / ".openai4s" / "figures" / "figure-2.png").read_bytes() == b"new"
