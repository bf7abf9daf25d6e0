"""The `openai4s-r` kernelspec: the same C++ Jupyter kernel driving the R
worker (spec kernel.md §7), through jupyter_client and nbclient, with the
sandbox off and enforced."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_support import (
    KERNEL_BINARY,
    R_KERNEL_NAME,
    KernelEnvironment,
    bubblewrap_unavailable_reason,
    kernel_missing_reason,
    run_cli,
)
from kernel_client import RunningKernel, stdout_of

pytestmark = [
    pytest.mark.skipif(kernel_missing_reason() is not None, reason=str(kernel_missing_reason())),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="R is not installed (r-base-core)"),
]


@pytest.fixture(params=["off", "enforce"])
def r_environment(request):
    if request.param == "enforce":
        reason = bubblewrap_unavailable_reason()
        if reason:
            pytest.skip(f"bubblewrap cannot sandbox a kernel here: {reason}")
    env = KernelEnvironment(sandbox_mode=request.param, lang="r")
    yield env
    env.cleanup()


@pytest.fixture
def r_kernel(r_environment):
    running = RunningKernel(r_environment)
    yield running
    running.shutdown()


def test_the_spec_runs_the_r_worker():
    spec = run_cli("export", "--lang", "r", "--executable", str(KERNEL_BINARY)).stdout
    document = json.loads(spec)
    assert document["language"] == "R"
    assert document["argv"][document["argv"].index("--lang") + 1] == "r"
    worker_argv = json.loads(document["argv"][document["argv"].index("--worker-argv") + 1])
    assert worker_argv[0] == "/bin/sh" and worker_argv[-1].endswith("r_worker.R")
    # R's own version, recorded so kernel_info need not wait for the worker.
    recorded = document["argv"][document["argv"].index("--language-version") + 1]
    asked = subprocess.run(
        ["Rscript", "-e", "cat(R.version$major, R.version$minor, sep = '.')"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert recorded == asked.stdout.strip()


def test_without_r_install_refuses_with_the_spec_s_text(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path / "empty"), "OPENAI4S_DATA_DIR": str(tmp_path)}
    result = run_cli(
        "install",
        "--prefix",
        str(tmp_path / "prefix"),
        "--executable",
        str(KERNEL_BINARY),
        "--lang",
        "r",
        env=env,
        check=False,
    )
    assert result.returncode == 1
    assert "no R interpreter available" in result.stderr
    assert not (tmp_path / "prefix" / "share" / "jupyter" / "kernels" / R_KERNEL_NAME).exists()


def test_kernel_info_says_r(r_kernel):
    r_kernel.kc.kernel_info()
    content = r_kernel.kc.get_shell_msg(timeout=30)["content"]
    assert content["language_info"]["name"] == "R"
    assert content["language_info"]["version"][0].isdigit()
    assert "R " in content["banner"] and "sandbox:" in content["banner"]


def test_an_r_cell_streams_its_output_and_keeps_its_namespace(r_kernel):
    reply, outputs = r_kernel.execute("x <- c(2, 3, 4)\nprint(sum(x))\ncat('done\\n')")
    assert reply["status"] == "ok", reply
    assert stdout_of(outputs) == "[1] 9\ndone\n"
    reply, outputs = r_kernel.execute("x * 2")
    assert stdout_of(outputs) == "[1] 4 6 8\n"


def test_an_r_error_is_an_error_reply_with_the_message(r_kernel):
    reply, outputs = r_kernel.execute("f <- function(v) stop('bad value: ', v)\nf(3)")
    assert reply["status"] == "error"
    assert reply["ename"] == "Error"
    assert "bad value: 3" in reply["evalue"]
    assert [m for m in outputs if m["msg_type"] == "error"]
    reply, _ = r_kernel.execute("1 + 1")
    assert reply["status"] == "ok", "the kernel stays usable"


def test_an_interrupt_stops_an_r_cell_and_keeps_the_namespace(r_kernel):
    r_kernel.execute("kept <- 41")
    msg_id = r_kernel.kc.execute("cat('started\\n'); Sys.sleep(30)")
    r_kernel.wait_busy(msg_id)
    r_kernel.km.interrupt_kernel()
    reply, _ = r_kernel.collect(msg_id, timeout=20)
    assert reply["status"] == "error"
    assert reply["ename"] == "KeyboardInterrupt"
    reply, outputs = r_kernel.execute("cat(kept + 1)")
    assert stdout_of(outputs) == "42"


def test_quit_is_refused_and_the_kernel_stays(r_kernel):
    reply, _ = r_kernel.execute("quit(save = 'no')")
    assert reply["status"] == "error"
    assert "disabled" in reply["evalue"] or "disabled" in "".join(reply["traceback"])
    reply, outputs = r_kernel.execute("cat('alive')")
    assert stdout_of(outputs) == "alive"


def test_nbclient_runs_an_r_notebook_with_a_plot(r_environment):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("y <- cumsum(1:5)\nprint(y)"),
        nbformat.v4.new_code_cell("plot(y, type = 'l')"),
        nbformat.v4.new_code_cell("stop('on purpose')"),
    ]
    nb.metadata["kernelspec"] = {"name": R_KERNEL_NAME, "display_name": "openai4s (R)"}
    with r_environment.applied():
        NotebookClient(
            nb,
            kernel_name=R_KERNEL_NAME,
            timeout=120,
            allow_errors=True,
            resources={"metadata": {"path": str(r_environment.workspace)}},
        ).execute()
    printed = "".join(
        o.get("text", "") for o in nb.cells[0].outputs if o["output_type"] == "stream"
    )
    assert printed == "[1]  1  3  6 10 15\n"
    assert any("image/png" in o.get("data", {}) for o in nb.cells[1].outputs), nb.cells[1].outputs
    errors = [o for o in nb.cells[2].outputs if o["output_type"] == "error"]
    assert errors and "on purpose" in errors[0]["evalue"]


def _stream(outputs, name):
    return "".join(
        m["content"]["text"]
        for m in outputs
        if m["msg_type"] == "stream" and m["content"]["name"] == name
    )


def test_child_processes_and_their_stderr_reach_the_notebook_in_order(r_kernel):
    reply, outputs = r_kernel.execute(
        "cat('one\\n')\n"
        "system('echo two', wait = FALSE); Sys.sleep(0.5)\n"
        "system2('sh', c('-c', shQuote('echo three; echo oops >&2')))\n"
        "p <- pipe('sh -c \"echo piped-err >&2; echo x\"'); invisible(readLines(p)); close(p)\n"
        "cat('four\\n')"
    )
    assert reply["status"] == "ok", reply
    assert _stream(outputs, "stdout") == "one\ntwo\nthree\nfour\n"
    assert _stream(outputs, "stderr") == "oops\npiped-err\n"


def test_a_shut_down_r_kernel_leaves_no_sink_directory(r_environment):
    """xeus leaves the process by std::exit after a shutdown_request, so no
    destructor removed the R worker's sink directory (one left in the
    temporary directory per kernel)."""
    # Searchable by a sandbox's own uid, as /tmp is.
    temporary = Path(tempfile.mkdtemp(prefix="o4s-tmpdir-"))
    temporary.chmod(0o755)
    environ = r_environment.environ
    r_environment.environ = lambda: {**environ(), "TMPDIR": str(temporary)}
    running = RunningKernel(r_environment)
    try:
        reply, outputs = running.execute("system('echo from-a-child')")
        assert reply["status"] == "ok", reply
        assert "from-a-child" in stdout_of(outputs)
        assert [p.name for p in temporary.iterdir() if p.name.startswith("openai4s-sinks-")]
    finally:
        running.shutdown()
    left = [p.name for p in temporary.iterdir()]
    shutil.rmtree(temporary, ignore_errors=True)
    assert not [name for name in left if name.startswith("openai4s-sinks-")], left
