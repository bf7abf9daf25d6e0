"""Guards: reports about state a Cell leaked, without importing matplotlib."""

import importlib.util

import pytest

from worker_harness import worker_env

MATPLOTLIB = ("matplotlib", "matplotlib.figure", "matplotlib.font_manager", "matplotlib.pyplot")
HEAVY = ("numpy", "pandas", "IPython", "asyncio", "matplotlib")
needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed"
)


@pytest.mark.parametrize(
    ("mode", "extra"),
    [("repl", {}), ("repl", {"OPENAI4S_GUARDS_OFF": "1"}), ("jupyter", {})],
    ids=["guards-and-provenance", "provenance-only", "guards-only"],
)
def test_a_cell_that_never_plots_loads_nothing_heavy(spawn, tmp_path, mode, extra):
    worker = spawn(env=worker_env(tmp_path, mode, **extra))
    assert worker.execute("x = 1")[0]["error"] is None
    response, _ = worker.execute(
        f"import sys\nprint([m for m in {HEAVY + MATPLOTLIB!r} if m in sys.modules])"
    )
    assert response["stdout"] == "[]\n"


def test_environment_changes_are_reported(worker):
    response, _ = worker.execute(
        "import os\nos.environ['O4S_NEW'] = '1'\nos.environ.pop('LANG', None)"
    )
    assert response["guards"] == {
        "isolation": {"environ": {"added_or_changed": {"O4S_NEW": "1"}, "removed": ["LANG"]}}
    }
    assert worker.execute("pass")[0]["guards"] == {}


def test_warning_filter_changes_are_reported(worker):
    response, _ = worker.execute("import warnings\nwarnings.simplefilter('ignore')")
    assert response["guards"] == {"isolation": {"warnings_filters": "mutated"}}


def test_guards_off_reports_nothing(spawn, tmp_path):
    worker = spawn(env=worker_env(tmp_path, OPENAI4S_GUARDS_OFF="1"))
    response, _ = worker.execute("import os\nos.environ['O4S_NEW'] = '1'")
    assert response["guards"] == {}


@needs_matplotlib
def test_figures_left_open_are_reported_not_closed(worker):
    worker.execute("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt")
    response, _ = worker.execute("fig = plt.figure()")
    assert response["guards"]["matplotlib"] == {"leaked": [1], "closed": []}
    response, _ = worker.execute("print(plt.get_fignums())\nplt.close('all')")
    assert response["stdout"] == "[1]\n"  # the guard did not close it
    assert response["guards"]["matplotlib"] == {"leaked": [], "closed": [1]}
