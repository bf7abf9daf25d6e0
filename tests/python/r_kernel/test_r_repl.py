"""`python -m openai4s repl --lang r` and its R cell buffer."""

import subprocess
import sys

from openai4s.cli.r_cells import RCellBuffer, is_open


def test_r_lines_continue_while_an_expression_is_open():
    assert is_open("f <- function(a) {")
    assert is_open("x <- c(1,")
    assert is_open("y <- 1 +")
    assert is_open("s <- 'a (")
    assert not is_open("s <- 'a ('")
    assert not is_open("x <- 1 # a comment with a (")
    buffer = RCellBuffer()
    assert buffer.push("f <- function(a) {") is None and buffer.pending
    assert buffer.push("  a * 3") is None
    assert buffer.push("}") == "f <- function(a) {\n  a * 3\n}"
    assert buffer.push("") is None and not buffer.pending
    assert buffer.push("1 + 1") == "1 + 1"


def test_the_repl_runs_a_script_of_r_cells(tmp_path):
    script = "x <- 2\nf <- function(a) {\n  a * 3\n}\nf(x)\nmessage('note')\nstop('last')\n"
    repl = subprocess.run(
        [sys.executable, "-m", "openai4s", "repl", "--lang", "r", "--cwd", str(tmp_path)],
        input=script,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "[1] 6\n" in repl.stdout, repl
    assert "note" in repl.stderr
    assert "Error: last" in repl.stderr
    assert repl.returncode == 1, "a failed cell makes the script fail"
