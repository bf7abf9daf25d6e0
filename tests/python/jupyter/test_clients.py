"""Real Jupyter clients on the openai4s kernel: nbclient executing a
notebook (numpy, an error cell with allow_errors), and `jupyter console`
answering a cell through a pipe."""

import subprocess

import pytest

from jupyter_support import KERNEL_NAME

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


def _notebook(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": "openai4s",
        "language": "python",
    }
    return nb


def _stdout(cell):
    # Output streams live, one message per write; clients join them.
    return "".join(o["text"] for o in cell.outputs if o.get("name") == "stdout")


def _run(environment, nb):
    with environment.applied():
        client = nbclient.NotebookClient(
            nb,
            kernel_name=KERNEL_NAME,
            allow_errors=True,
            timeout=120,
            startup_timeout=60,
            resources={"metadata": {"path": str(environment.workspace)}},
        )
        client.execute()
    return nb


def test_nbclient_runs_a_numpy_cell_and_keeps_an_error_cell(environment):
    nb = _run(
        environment,
        _notebook(
            "import numpy as np\nprint(np.arange(6).reshape(2, 3).sum(axis=0))",
            "1 / 0",
            "print('after the error')",
        ),
    )
    numpy_cell, error_cell, after = nb.cells
    assert _stdout(numpy_cell) == "[3 5 7]\n"
    errors = [o for o in error_cell.outputs if o["output_type"] == "error"]
    assert errors and errors[0]["ename"] == "ZeroDivisionError"
    assert _stdout(after) == "after the error\n"
    assert "Shutting down" not in _stdout(error_cell)
    assert [c.execution_count for c in nb.cells] == [1, 2, 3]


def test_nbclient_keeps_a_matplotlib_png(environment):
    nb = _run(
        environment,
        _notebook(
            "import matplotlib\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"
        ),
    )
    outputs = nb.cells[0].outputs
    assert any("image/png" in o.get("data", {}) for o in outputs), outputs


def test_jupyter_console_answers_a_cell(environment):
    # jupyter console 6.4 sends its first cell without waiting for iopub
    # (no wait_for_ready); the kernel's iopub hold (iopub_hold.h) keeps the
    # cell's messages until the console's subscription lands, where a plain
    # PUB socket would drop them and leave the console waiting for idle.
    proc = subprocess.run(
        [
            "jupyter",
            "console",
            "--kernel",
            KERNEL_NAME,
            "--simple-prompt",
            "--ZMQTerminalInteractiveShell.kernel_timeout=60",
        ],
        # End of input is how a piped console leaves (it then shuts the
        # kernel down).
        input="print(6 * 7)\n",
        capture_output=True,
        text=True,
        timeout=30,  # a working console answers in about 2 s
        cwd=str(environment.workspace),
        env=environment.environ(),
    )
    assert "In [1]: 42" in proc.stdout, (proc.stdout, proc.stderr)
    assert proc.returncode == 0
    assert "sandbox:" in proc.stdout  # the banner from kernel_info
