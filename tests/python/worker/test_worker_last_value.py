"""The last expression of a Cell is shown as IPython's Out shows it (issue
12, point 2), and a SyntaxError shows only the user's code (point 7)."""

import pytest


@pytest.mark.parametrize(
    "code, stdout",
    [
        ("x = 1\nx + 1", "2\n"),
        ("21 * 2", "42\n"),
        ("x = 5\nprint('a')\nx", "a\n5\n"),
        ("a = 1; a", "1\n"),
        ("'text'  # a comment", "'text'\n"),
        ("items = [1, 2]\n(items\n + [3])", "[1, 2, 3]\n"),
        ("import os\nos.sep", "'/'\n"),
    ],
)
def test_the_last_expression_is_shown(worker, code, stdout):
    response, _ = worker.execute(code)
    assert response["error"] is None
    assert response["stdout"] == stdout


@pytest.mark.parametrize(
    "code",
    [
        "x = 1\nx + 1;",
        "1;",
        "x = 2\nx ;  # hidden",
        "None",
        "x = 1\nprint",
        "for i in range(3):\n    i\n",
        "y = 3",
        "def f():\n    return 1\n",
        # A write's count of characters is not shown (the seed pins this).
        "from pathlib import Path\nPath('w.txt').write_text('output')",
        "import sys\nf = open('v.txt', 'w')\nf.write('abc')",
    ],
)
def test_nothing_is_shown_for_a_semicolon_none_or_a_statement(worker, code):
    response, _ = worker.execute(code)
    assert response["error"] is None
    shown = "<built-in function print>\n" if code.endswith("print") else ""
    assert response["stdout"] == shown


def test_the_statements_run_before_the_shown_value_and_only_once(worker):
    response, _ = worker.execute("calls = []\ncalls.append(1)\nlen(calls)")
    assert response["stdout"] == "1\n"
    assert worker.execute("calls")[0]["stdout"] == "[1]\n"


def test_a_failing_last_expression_is_a_normal_error_with_its_line(worker):
    response, _ = worker.execute("x = 1\n1 / 0")
    assert "ZeroDivisionError" in response["error"]
    assert response["trace"]["error_lineno"] == 2


@pytest.mark.parametrize("code", ["x = (1 +", "def f(:\n    pass", "x = 1\nx +\n  1", "1 +* 2"])
def test_a_syntax_error_shows_the_users_code_only(worker, code):
    response, _ = worker.execute(code)
    error = response["error"]
    assert error.rstrip().splitlines()[-1].startswith("SyntaxError"), error
    assert "During handling" not in error and "Traceback" not in error, error
    assert "worker.py" not in error and "openai4s" not in error, error
    assert error.startswith('  File "<kernel:'), error
    caret_lines = [line for line in error.splitlines() if line.strip().startswith("^")]
    assert len(caret_lines) == 1, error
    assert response["trace"] == {"error_lineno": None, "error_call": None}
