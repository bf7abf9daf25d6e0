"""The `openai4s-r` kernel answers what jupyter console asks before and
between cells (is_complete on every Enter, complete on Tab, inspect on
`?`), through jupyter_client, as IRkernel does. Sandbox off: the answers
come from the R worker either way."""

import shutil
import subprocess

import pytest

from jupyter_support import KernelEnvironment, kernel_missing_reason
from kernel_client import RunningKernel, stdout_of

pytestmark = [
    pytest.mark.skipif(kernel_missing_reason() is not None, reason=str(kernel_missing_reason())),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="R is not installed (r-base-core)"),
]


@pytest.fixture
def r_environment():
    env = KernelEnvironment(sandbox_mode="off", lang="r")
    yield env
    env.cleanup()


@pytest.mark.skipif(shutil.which("jupyter-console") is None, reason="needs jupyter-console")
def test_jupyter_console_runs_a_multi_line_r_cell(r_environment):
    # Every Enter asks is_complete; an R worker that left it unanswered
    # froze the console's first Enter for good.
    proc = subprocess.run(
        [
            "jupyter",
            "console",
            "--kernel",
            r_environment.kernel_name,
            "--simple-prompt",
            "--ZMQTerminalInteractiveShell.kernel_timeout=60",
            "--ZMQTerminalInteractiveShell.kernel_is_complete_timeout=60",
        ],
        input="x <- c(1,\n2)\nprint(sum(x))\n",
        capture_output=True,
        text=True,
        timeout=180,
        cwd=str(r_environment.workspace),
        env=r_environment.environ(),
    )
    assert "[1] 3" in proc.stdout, (proc.stdout, proc.stderr)
    assert "Error" not in proc.stdout, proc.stdout
    assert proc.returncode == 0


@pytest.fixture
def r_kernel():
    env = KernelEnvironment(sandbox_mode="off", lang="r")
    running = RunningKernel(env)
    yield running
    running.shutdown()
    env.cleanup()


def _shell_reply(kernel, msg_id, timeout=60):
    reply = kernel.kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=timeout)
    return reply["content"]


def test_is_complete_complete_and_inspect_are_answered_by_r(r_kernel):
    for code, status in [
        ("x <- 1", "complete"),
        ("f <- function(a) {", "incomplete"),
        ("s <- 'open", "incomplete"),
        ("x <- )", "invalid"),
    ]:
        reply = _shell_reply(r_kernel, r_kernel.kc.is_complete(code))
        assert reply["status"] == status, (code, reply)

    reply, _ = r_kernel.execute("frame <- data.frame(alpha = 1:3)")
    assert reply["status"] == "ok", reply
    reply = _shell_reply(r_kernel, r_kernel.kc.complete("frame$al", 8))
    assert reply["status"] == "ok" and reply["matches"] == ["alpha"]
    assert (reply["cursor_start"], reply["cursor_end"]) == (6, 8)
    reply = _shell_reply(r_kernel, r_kernel.kc.complete("pas", 3))
    assert "paste0" in reply["matches"]

    reply = _shell_reply(r_kernel, r_kernel.kc.inspect("frame", 2))
    assert reply["found"] and "3 x 1 data.frame" in reply["data"]["text/plain"]
    reply = _shell_reply(r_kernel, r_kernel.kc.inspect("paste", 2))
    assert reply["found"] and "Concatenate" in reply["data"]["text/plain"]

    reply, outputs = r_kernel.execute("cat(nrow(frame))")
    assert stdout_of(outputs) == "3", "the worker is the same one, namespace kept"
