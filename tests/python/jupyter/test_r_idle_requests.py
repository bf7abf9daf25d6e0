"""The `openai4s-r` kernel answers what jupyter console asks before and
between cells (is_complete on every Enter, complete on Tab, inspect on
`?`), through jupyter_client, as IRkernel does. Sandbox off: the answers
come from the R worker either way."""

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from jupyter_support import KernelEnvironment, kernel_missing_reason
from kernel_client import RunningKernel, stdout_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from repl_support import TmuxPane, descendants  # noqa: E402

#: What the console's kernel needs from the test's environment.
_PASSED = ("JUPYTER_PATH", "OPENAI4S_DATA_DIR", "OPENAI4S_KERNEL_SANDBOX", "PATH")

pytestmark = [
    pytest.mark.skipif(kernel_missing_reason() is not None, reason=str(kernel_missing_reason())),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="R is not installed (r-base-core)"),
]


@pytest.fixture
def r_environment():
    env = KernelEnvironment(sandbox_mode="off", lang="r")
    yield env
    env.cleanup()


@pytest.mark.skipif(
    shutil.which("jupyter-console") is None or shutil.which("tmux") is None,
    reason="needs jupyter-console and tmux",
)
def test_jupyter_console_runs_a_multi_line_r_cell(r_environment, tmp_path):
    # In a terminal every Enter asks is_complete; an R worker that left it
    # unanswered froze the console's first Enter for good.
    pane = TmuxPane(tmp_path)
    settings = [f"{k}={v}" for k, v in r_environment.environ().items() if k in _PASSED]
    try:
        pane.start(
            ["env", f"HOME={tmp_path}", *settings, "jupyter", "console", "--kernel"]
            + [
                r_environment.kernel_name,
                "--ZMQTerminalInteractiveShell.kernel_timeout=120",
                "--ZMQTerminalInteractiveShell.kernel_is_complete_timeout=120",
            ]
        )
        pane.wait_for_text("In [1]:", timeout=120)
        # jupyter console blocks its event loop while it waits for an
        # is_complete answer, and a key timer firing meanwhile breaks it:
        # the first Enter waits until R has booted and sits idle.
        _wait_until_idle(_r_worker(pane.program_pid()))
        _type_line(pane, "1 + 1")
        pane.wait_for_text("[1] 2", timeout=120)
        pane.wait_for_text("In [2]:", timeout=30)
        _type_line(pane, "x <- c(1,")
        pane.wait_for_text("...:", timeout=60)
        _type_line(pane, "2)")
        pane.wait_for_text("In [3]:", timeout=60)
        _type_line(pane, "print(sum(x))")
        pane.wait_for_text("[1] 3", timeout=60)
        pane.wait_for_text("In [4]:", timeout=30)
        assert "Error" not in pane.text()
    finally:
        pane.kill_server()


def _type_line(pane, text):
    # Enter apart from the text: prompt_toolkit's key-flush timer firing
    # while the console's Enter handler waits for is_complete breaks the
    # console (a jupyter console 6.4 bug, not the kernel's).
    pane.send("-l", text)
    time.sleep(1.0)
    pane.send("Enter")


def _r_worker(root, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in descendants(root):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if b"r_worker.R" in handle.read() and b"/bin/sh" not in handle.read():
                        return pid
            except OSError:
                continue
        time.sleep(0.1)
    raise AssertionError("the R worker never started")


def _cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _wait_until_idle(pid, quiet=0.5, timeout=120):
    """Until the process used no CPU for `quiet` seconds (blocked reading)."""
    deadline = time.monotonic() + timeout
    last, since = _cpu_ticks(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = _cpu_ticks(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    raise AssertionError("the R worker never went idle")


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


def _gate_the_r_worker(environment, gate):
    """The installed spec's R worker waits for `gate` (a file in the
    workspace, its cwd) before it starts."""
    spec_file = environment.spec_file
    spec = json.loads(spec_file.read_text())
    argv = spec["argv"]
    at = argv.index("--worker-argv") + 1
    wait = f'while [ ! -e {gate} ]; do sleep 0.05; done; exec "$@"'
    argv[at] = json.dumps(["/bin/sh", "-c", wait, "sh", *json.loads(argv[at])])
    spec_file.write_text(json.dumps(spec))


def test_is_complete_is_answered_while_the_r_worker_starts(r_environment):
    # jupyter console waits one second for its first is_complete answer and
    # past that stops asking for the whole session; R boots slower than that.
    _gate_the_r_worker(r_environment, "worker-may-start")
    kernel = RunningKernel(r_environment)  # kernel_info is answered at once
    try:
        for code, status in [
            ("x <- 1", "complete"),
            ("for (i in 1:3) {", "incomplete"),
            ("x <- 1 +", "incomplete"),
            ("f(1))", "invalid"),
        ]:
            reply = _shell_reply(kernel, kernel.kc.is_complete(code), timeout=30)
            assert reply["status"] == status, (code, reply)
        (r_environment.workspace / "worker-may-start").touch()
        reply, outputs = kernel.execute("cat(1 + 1)", timeout=120)
        assert reply["status"] == "ok" and stdout_of(outputs) == "2"
        # Once up, the worker's own parser answers.
        reply = _shell_reply(kernel, kernel.kc.is_complete("x <- )"))
        assert reply["status"] == "invalid"
    finally:
        kernel.shutdown()
