"""The openai4s Jupyter kernel through jupyter_client: interrupts (message
and signal mode), a dying worker, restart and shutdown, host.* through the
C++ dispatcher, and is_complete."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from jupyter_support import alive, descendants
from kernel_client import stdout_of


def test_stream_output_is_live_and_errors_carry_the_traceback(kernel):
    reply, outputs = kernel.execute("print('a')\nprint('b')")
    assert reply["status"] == "ok"
    assert stdout_of(outputs) == "a\nb\n"
    reply, outputs = kernel.execute("def f():\n    raise KeyError('nope')\nf()")
    assert reply["status"] == "error"
    assert reply["ename"] == "KeyError"
    assert reply["evalue"] == "'nope'"
    assert any("Traceback" in line for line in reply["traceback"])
    errors = [m for m in outputs if m["msg_type"] == "error"]
    assert len(errors) == 1 and errors[0]["content"]["ename"] == "KeyError"


@pytest.mark.parametrize("mode", ["message", "signal"])
def test_interrupt_stops_the_cell_and_keeps_the_namespace(kernel, mode):
    kernel.execute("x = 41")
    msg_id = kernel.kc.execute("import time\nprint('started', flush=True)\ntime.sleep(60)")
    kernel.wait_busy(msg_id)
    if mode == "message":
        kernel.km.interrupt_kernel()  # the spec's interrupt_mode: interrupt_request on control
    else:
        kernel.km.signal_kernel(signal.SIGINT)  # what interrupt_mode "signal" sends
    reply, _ = kernel.collect(msg_id, timeout=30)
    assert reply["status"] == "error"
    assert reply["ename"] == "KeyboardInterrupt"
    reply, outputs = kernel.execute("print(x + 1)")
    assert reply["status"] == "ok" and stdout_of(outputs) == "42\n"


def test_a_dead_worker_fails_its_cell_and_the_next_cell_gets_a_fresh_one(kernel):
    kernel.execute("y = 1")
    reply, outputs = kernel.execute("import os\nos._exit(3)")
    assert reply["status"] == "error"
    assert reply["ename"] == "KernelWorkerDied"
    assert "exit" in reply["evalue"]
    reply, outputs = kernel.execute("print('y' in globals())")
    assert reply["status"] == "ok"
    assert stdout_of(outputs) == "False\n"


def test_shutdown_leaves_no_process(environment):
    from kernel_client import RunningKernel

    running = RunningKernel(environment)
    running.execute("print('up')")
    pid = running.pid
    family = descendants(pid)
    assert family, "the kernel should have a worker process"
    running.shutdown()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(alive(p) for p in [pid, *family]):
        time.sleep(0.1)
    assert not [p for p in [pid, *family] if alive(p)]


def test_restart_gives_a_fresh_namespace(kernel):
    kernel.execute("z = 5")
    old_pid = kernel.pid
    kernel.restart()
    assert kernel.pid != old_pid and not alive(old_pid)
    reply, outputs = kernel.execute("print('z' in globals())")
    assert stdout_of(outputs) == "False\n"


def test_is_complete_follows_codeop(kernel):
    answers = {}
    for code in ("x = 1", "for i in range(3):", "x = (1,", "1 +* 2"):
        kernel.kc.is_complete(code)
        answers[code] = kernel.kc.get_shell_msg(timeout=30)["content"]
    assert answers["x = 1"]["status"] == "complete"
    assert answers["for i in range(3):"] == {"status": "incomplete", "indent": "    "}
    assert answers["x = (1,"]["status"] == "incomplete"
    assert answers["1 +* 2"]["status"] == "invalid"


def test_comm_info_is_empty(kernel):
    kernel.kc.comm_info()
    reply = kernel.kc.get_shell_msg(timeout=30)
    assert reply["content"]["status"] == "ok" and reply["content"]["comms"] == {}


def test_host_calls_go_through_the_dispatcher_and_the_store(kernel, environment):
    code = (
        "open('result.txt', 'w').write('42')\n"
        "saved = host.save_artifact('result.txt')\n"
        "print(sorted(saved))\n"
        "try:\n"
        "    host.bash('echo hi')\n"
        "except RuntimeError as exc:\n"
        "    print('bash refused:', exc)\n"
    )
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok", reply
    text = stdout_of(outputs)
    assert "version_id" in text
    # No standing rule and a client that allows no stdin: nobody can be
    # asked, so the unattended policy (deny) decides.
    assert "bash refused:" in text and "nobody can be asked here" in text
    database = environment.data_dir / "openai4s.db"
    assert database.exists() and not str(database).startswith(str(environment.workspace))
    with sqlite3.connect(database) as conn:
        methods = [row[0] for row in conn.execute("SELECT method FROM host_call_log")]
    assert "save_artifact" in methods


def _run_with_answer(kernel, code, answer):
    msg_id = kernel.kc.execute(code, allow_stdin=True)
    request = kernel.kc.get_stdin_msg(timeout=60)
    assert request["msg_type"] == "input_request"
    kernel.kc.input(answer)
    reply, outputs = kernel.collect(msg_id)
    return request["content"], reply, stdout_of(outputs)


def _bash_requests(environment):
    with sqlite3.connect(environment.data_dir / "openai4s.db") as conn:
        return conn.execute(
            "SELECT state, scope, resolution_context FROM permission_requests"
            " WHERE tool = 'bash' ORDER BY created_at"
        ).fetchall()


@pytest.mark.parametrize("answer", ["y", "n", "a"])
def test_an_ask_permission_becomes_a_prompt_on_stdin(kernel, environment, answer):
    code = "try:\n    print(host.bash('echo approved-run'))\nexcept RuntimeError as exc:\n    print('refused:', exc)\n"
    prompt, reply, text = _run_with_answer(kernel, code, answer)
    assert "[y]es once / [a]lways this session / [N]o" in prompt["prompt"]
    assert "    | echo approved-run\n" in prompt["prompt"]
    assert reply["status"] == "ok", reply
    state, scope, context = _bash_requests(environment)[-1]
    assert context == "live_thread"
    if answer == "n":
        assert "refused:" in text and "denied by the user" in text
        assert state == "denied"
        return
    assert "approved-run" in text and "refused" not in text
    assert state == "allowed"
    assert scope == ("conversation" if answer == "a" else "once")
    if answer == "a":
        # Remembered for this kernel's conversation: no second prompt.
        msg_id = kernel.kc.execute(code, allow_stdin=True)
        reply, outputs = kernel.collect(msg_id)
        assert "approved-run" in stdout_of(outputs)


def test_the_input_request_prompt_shows_controls_as_escapes(kernel, environment):
    # A notebook or console would act on the CR and ESC[2K: the real command
    # erased, "echo harmless" left on screen (issue 27, point 2).
    code = (
        "try:\n    host.bash('rm -rf precious' + chr(13) + chr(27) + '[2Kecho harmless')\n"
        "except RuntimeError as exc:\n    print('refused:', exc)\n"
    )
    prompt, reply, text = _run_with_answer(kernel, code, "n")
    assert "    | rm -rf precious\\r\\x1b[2Kecho harmless\n" in prompt["prompt"]
    assert "\r" not in prompt["prompt"] and "\x1b" not in prompt["prompt"]
    assert "denied by the user" in text


def test_a_long_target_is_cut_visibly_and_always_counts_as_once(kernel, environment):
    code = (
        "try:\n    print(host.bash('echo ' + 'x' * 5000 + ' && echo ran'))\n"
        "except RuntimeError as exc:\n    print('refused:', exc)\n"
    )
    prompt, reply, text = _run_with_answer(kernel, code, "a")
    assert "of 5017 bytes shown; sha256 " in prompt["prompt"]
    assert "[a]lways" not in prompt["prompt"]
    # "a" is not among the choices: it denies, and no rule is stored.
    assert "denied by the user" in text
    assert _bash_requests(environment)[-1] == ("denied", None, "live_thread")


def test_the_store_may_not_live_in_the_workspace(environment, tmp_path):
    import subprocess

    from jupyter_support import KERNEL_BINARY

    inside = environment.workspace / "data"
    connection = tmp_path / "conn.json"
    connection.write_text("{}")
    proc = subprocess.run(
        [
            str(KERNEL_BINARY),
            "-f",
            str(connection),
            "--python",
            "python3",
            "--repo-root",
            "/nonexistent",
            "--workspace",
            str(environment.workspace),
            "--data-dir",
            str(inside),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ},
    )
    assert proc.returncode == 2
    assert "inside the workspace" in proc.stderr


_CLIENT_THAT_DIES = """
import sys, time
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name=sys.argv[1], cwd=sys.argv[2], startup_timeout=60)
kc.execute_interactive("print(1)", timeout=60, output_hook=lambda msg: None)
print(km.provisioner.process.pid, flush=True)
time.sleep(600)
"""


def test_a_killed_client_leaves_no_kernel_behind(environment):
    # The notebook server or console that started the kernel is SIGKILLed
    # (no shutdown_request ever comes): the kernel and its worker end too.
    client = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CLIENT_THAT_DIES,
            environment.kernel_name,
            str(environment.workspace),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=environment.environ(),
    )
    try:
        pid = int(client.stdout.readline())
        family = descendants(pid)
        assert family, "the kernel should have a worker process"
    finally:
        client.kill()
        client.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(alive(p) for p in [pid, *family]):
        time.sleep(0.1)
    assert not [p for p in [pid, *family] if alive(p)]


def test_a_second_client_of_the_same_manager_gets_its_replies(kernel):
    # KernelManager.client() reuses the manager's session, so the second
    # client's sockets carry the first one's identity; the kernel must
    # answer the newest connection (ROUTER handover), as ipykernel does.
    second = kernel.km.client()
    second.start_channels()
    try:
        assert second.kernel_info(reply=True, timeout=30)["content"]["status"] == "ok"
        reply = second.execute_interactive("print('from the second')", timeout=60)
        assert reply["content"]["status"] == "ok"
    finally:
        second.stop_channels()


def _iopub_kinds(kc, msg_id, seconds):
    import queue

    kinds, texts = [], []
    deadline = time.monotonic() + seconds
    while "idle" not in kinds and time.monotonic() < deadline:
        try:
            message = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if message["parent_header"].get("msg_id") == msg_id:
            kinds.append(message["content"].get("execution_state", message["msg_type"]))
            texts.append(message["content"].get("text", ""))
    return kinds, "".join(texts)


def test_a_client_that_connects_at_once_gets_its_iopub_messages(environment):
    # A client that connects as soon as the kernel process exists, and
    # waits the way jupyter_client documents (wait_for_ready: kernel_info
    # until iopub delivers), gets every iopub message of its first cell.
    # A subscriber that connects before a kernel binds can miss messages
    # until its subscription lands (any kernel, ipykernel too), so clients
    # that skip that wait race; the kernel binds before it starts its
    # worker to keep that window short.
    from jupyter_client.manager import KernelManager

    with environment.applied():
        for _ in range(3):
            km = KernelManager(kernel_name=environment.kernel_name)
            km.start_kernel(cwd=str(environment.workspace))
            kc = km.client()
            kc.start_channels()
            try:
                kc.wait_for_ready(timeout=60)
                msg_id = kc.execute("print(6 * 7)")
                kinds, _ = _iopub_kinds(kc, msg_id, 20)
                assert kinds[:1] == ["busy"] and kinds[-1:] == ["idle"], kinds
                assert "stream" in kinds
            finally:
                kc.stop_channels()
                km.shutdown_kernel(now=True)


def _started_without_iopub(environment, code):
    """A kernel and a client whose iopub is not connected, after `code`'s
    reply came back on shell. Returns (km, kc, msg_id)."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name=environment.kernel_name)
    km.start_kernel(cwd=str(environment.workspace))
    kc = km.client()
    kc.start_channels(iopub=False)
    try:
        msg_id = kc.execute(code)
        reply = kc.get_shell_msg(timeout=60)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["status"] == "ok"
    except BaseException:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        raise
    return km, kc, msg_id


@pytest.mark.xfail(
    reason="passes alone every time, but failed in 2 of 5 full `pytest -n 2` runs (and in 0 "
    "of 19 later ones): the client received none of its cell's iopub messages while the trace "
    "said the hold ended by a subscription. A SUB socket elsewhere that still reconnects to "
    "the port number this kernel's iopub got gives exactly that (reproduced on purpose: the "
    "stray takes all six messages, the hold looks normal); where one came from in the suite "
    "is not found yet. The trace now names each subscriber's pid (compare the client pid "
    "this test prints). ipc:// would shut strays out, but xeus 2.4 aborts on it.",
    strict=False,
)
def test_a_cell_sent_before_the_client_subscribes_keeps_its_iopub_messages(environment):
    # The race jupyter console 6.4 runs, made certain: the client's first
    # request is answered before it has even connected iopub. A PUB socket
    # drops what it publishes before a subscription lands; the kernel holds
    # iopub until its first subscriber (iopub_hold.h), so the busy, the
    # stream and the idle of that cell all still arrive. ipykernel loses
    # them.
    with environment.applied():
        os.environ["OPENAI4S_JUPYTER_TRACE_IOPUB"] = "1"  # on stderr if this fails
        km, kc, msg_id = _started_without_iopub(environment, "print(6 * 7)")
        # The trace names the process behind each iopub connection.
        print(f"client pid {os.getpid()}, iopub port {km.iopub_port}")
        try:
            kc.iopub_channel.start()
            kinds, text = _iopub_kinds(kc, msg_id, 20)
            assert kinds[:1] == ["busy"] and kinds[-1:] == ["idle"], kinds
            assert text == "42\n"
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def test_a_kernel_nobody_subscribes_to_still_shuts_down_by_itself(environment):
    # The hold ends when the kernel stops: xeus's stop waits for the
    # publisher thread, which must not sit out the hold's 10 s (the client
    # would have killed the kernel by then).
    with environment.applied():
        km, kc, _ = _started_without_iopub(environment, "x = 1")
        kc.stop_channels()
        process = km.provisioner.process
        km.shutdown_kernel(now=False)  # a shutdown_request, not a kill
        # jupyter_client terminates, then kills, a kernel that has not
        # exited by half its shutdown_wait_time; 0 means it left by itself.
        assert process.wait(30) == 0
