"""The kernel serves while its worker starts: kernel_info is answered at
once (from the version the kernelspec recorded), a request that needs the
worker waits for it, a worker that cannot start is an error reply instead
of a dead kernel, and a stop during the start leaves no process.

The worker is held at its start by a gate: the kernelspec's `--python` is a
shell wrapper that reads a FIFO in the workspace before it execs the real
interpreter, so "the worker has not started yet" is certain, not a matter
of timing."""

import json
import os
import platform
import queue
import signal
import subprocess
import sys
import time

import pytest

from jupyter_support import KernelEnvironment, alive, bubblewrap_unavailable_reason, descendants
from kernel_client import stdout_of

_GATE = "worker-may-start"


def _respec(environment, python):
    """Point the installed kernelspec's --python at `python`."""
    path = environment.prefix / "share" / "jupyter" / "kernels" / environment.kernel_name
    spec_file = path / "kernel.json"
    spec = json.loads(spec_file.read_text())
    argv = spec["argv"]
    argv[argv.index("--python") + 1] = str(python)
    spec_file.write_text(json.dumps(spec))
    return argv


def _gated_python(environment):
    # Inside the sandbox only the workspace (the worker's cwd) is shared with
    # the test, so the gate is a relative name there.
    # In a prefix/bin/python layout, as installed interpreters are: the
    # sandbox shows the prefix read-only, and it holds nothing else.
    wrapper = environment.workspace.parent / "runtime" / "bin" / "python"
    wrapper.parent.mkdir(parents=True)
    os.mkfifo(environment.workspace / _GATE)
    # `read` blocks in open(2) until the test opens the FIFO for writing.
    wrapper.write_text(
        "#!/bin/sh\n" f"read go < {_GATE}\n" f'exec {os.path.realpath(sys.executable)} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def _open_gate(environment):
    with open(environment.workspace / _GATE, "w") as gate:
        gate.write("go\n")


@pytest.fixture(params=["off", "enforce"])
def gated(request):
    from jupyter_support import kernel_missing_reason

    reason = kernel_missing_reason()
    if reason:
        pytest.skip(reason)
    if request.param == "enforce":
        reason = bubblewrap_unavailable_reason()
        if reason:
            pytest.skip(f"no enforced sandbox here: {reason}")
    environment = KernelEnvironment(sandbox_mode=request.param)
    argv = _respec(environment, _gated_python(environment))
    assert "--language-version" in argv, "install records the worker's version"
    yield environment
    # A test that failed with the gate shut must not leave a worker held on
    # it: open it without waiting (ENXIO: nobody is reading any more).
    try:
        gate = os.open(environment.workspace / _GATE, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        pass
    else:
        os.write(gate, b"go\n")
        os.close(gate)
    environment.cleanup()


def _sigint_taken(pid, timeout=30):
    """Wait until the process has no SIGINT pending (its signal thread took
    it; the kernel blocks SIGINT in every thread and sigwaits for it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        pending = int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)
        if not pending & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.01)
    raise AssertionError("the kernel never took its SIGINT")


def _start(environment, stderr=None):
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name=environment.kernel_name)
    km.start_kernel(cwd=str(environment.workspace), stderr=stderr)
    kc = km.client()
    kc.start_channels()
    return km, kc


def _first_of(kc, msg_id, timeout=30):
    """The first iopub message of request `msg_id` (its busy)."""
    msg = kc.get_iopub_msg(timeout=timeout)
    while msg["parent_header"].get("msg_id") != msg_id:
        msg = kc.get_iopub_msg(timeout=timeout)
    return msg


def _reply_to(kc, msg_id, timeout=60):
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"]


def _outputs_until_idle(kc, msg_id, timeout=60):
    outputs = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return outputs
        outputs.append(msg)
    raise AssertionError(f"no idle for {msg_id}; got {[m['msg_type'] for m in outputs]}")


def test_kernel_info_is_answered_while_the_worker_is_held_at_its_start(gated):
    with gated.applied():
        km, kc = _start(gated)
        try:
            # wait_for_ready is kernel_info until iopub delivers: it returns
            # although the gate is shut, so no worker can have started.
            kc.wait_for_ready(timeout=30)
            info = kc.kernel_info(reply=True, timeout=30)["content"]
            assert info["status"] == "ok"
            assert info["language_info"]["version"] == platform.python_version()
            assert "sandbox: starting (mode " + gated.sandbox_mode in info["banner"]
            assert ("enforced" in info["banner"]) == (gated.sandbox_mode == "enforce")

            # A cell sent now waits for the worker: busy at once, its output
            # once the gate opens.
            msg_id = kc.execute("print(6 * 7)")
            busy = _first_of(kc, msg_id)
            assert busy["content"].get("execution_state") == "busy"
            _open_gate(gated)
            outputs = _outputs_until_idle(kc, msg_id)
            assert _reply_to(kc, msg_id)["status"] == "ok"
            assert stdout_of(outputs) == "42\n"

            # Once the worker is up, the banner says the sandbox's real state.
            info = kc.kernel_info(reply=True, timeout=30)["content"]
            assert "starting" not in info["banner"]
            assert info["language_info"]["version"] == platform.python_version()
            if gated.sandbox_mode == "enforce":
                assert "sandbox: enabled" in info["banner"] and "enforced" in info["banner"]
            else:
                assert "sandbox: disabled" in info["banner"]
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def _interrupt_by_message(kc):
    # interrupt_reply comes after the kernel has taken it.
    request = kc.session.msg("interrupt_request", {})
    kc.control_channel.send(request)
    reply = kc.get_control_msg(timeout=30)
    assert reply["parent_header"]["msg_id"] == request["header"]["msg_id"]


def _assert_stopped_before_it_ran(kc, msg_id):
    """The cell `msg_id` (`print('ran')\\nmarker = 1`) is reported interrupted
    and never ran; the kernel goes on, and the cell left nothing."""
    outputs = _outputs_until_idle(kc, msg_id)
    reply = _reply_to(kc, msg_id)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    assert stdout_of(outputs) == ""
    msg_id = kc.execute("print('marker' in globals())")
    outputs = _outputs_until_idle(kc, msg_id)
    assert _reply_to(kc, msg_id)["status"] == "ok"
    assert stdout_of(outputs) == "False\n"


@pytest.mark.parametrize("how", ["message", "signal"])
def test_an_interrupt_while_the_worker_starts_stops_the_waiting_cell(gated, how):
    if gated.sandbox_mode == "enforce" and how == "signal":
        pytest.skip("one mode is enough for the signal path")
    with gated.applied():
        km, kc = _start(gated)
        try:
            kc.wait_for_ready(timeout=30)
            msg_id = kc.execute("print('ran')\nmarker = 1")
            _first_of(kc, msg_id)  # busy: the cell waits for the worker
            if how == "message":
                _interrupt_by_message(kc)
            else:
                km.signal_kernel(signal.SIGINT)
                _sigint_taken(km.provisioner.process.pid)
            # The interrupt is in before the worker may start: the held cell
            # is reported interrupted and never runs.
            _open_gate(gated)
            _assert_stopped_before_it_ran(kc, msg_id)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def test_an_interrupt_while_a_dead_worker_is_replaced_stops_the_waiting_cell(gated):
    # The replacement starts through the same gated interpreter: the cell
    # that asked for it waits at the gate, with no worker to signal.
    with gated.applied():
        km, kc = _start(gated)
        try:
            _open_gate(gated)
            kc.wait_for_ready(timeout=30)
            msg_id = kc.execute("import os\nos._exit(3)")
            assert _reply_to(kc, msg_id)["ename"] == "KernelWorkerDied"
            _outputs_until_idle(kc, msg_id)
            msg_id = kc.execute("print('ran')\nmarker = 1")
            _first_of(kc, msg_id)  # busy: the cell waits for the replacement
            _interrupt_by_message(kc)
            _open_gate(gated)
            _assert_stopped_before_it_ran(kc, msg_id)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def test_a_worker_that_cannot_start_is_an_error_reply_and_the_kernel_stays(environment, tmp_path):
    missing = tmp_path / "no-such-python"
    _respec(environment, missing)
    log = tmp_path / "kernel-stderr.txt"
    with environment.applied(), open(log, "w") as stderr:
        km, kc = _start(environment, stderr=stderr)
        try:
            kc.wait_for_ready(timeout=30)
            for _ in range(2):  # each request tries again, and says why again
                msg_id = kc.execute("1 + 1")
                reply = _reply_to(kc, msg_id)
                _outputs_until_idle(kc, msg_id)
                assert reply["status"] == "error"
                assert reply["ename"] == "KernelWorkerUnavailable"
                assert str(missing) in reply["evalue"] or "no-such-python" in reply["evalue"]
            info = kc.kernel_info(reply=True, timeout=30)["content"]
            assert info["status"] == "ok"
        finally:
            kc.stop_channels()
        process = km.provisioner.process
        km.shutdown_kernel(now=False)
        assert process.wait(30) == 0
    assert "no-such-python" in log.read_text()


def _drop_version_flag(environment):
    spec_file = environment.spec_file
    spec = json.loads(spec_file.read_text())
    at = spec["argv"].index("--language-version")
    del spec["argv"][at : at + 2]
    spec_file.write_text(json.dumps(spec))


def test_a_spec_without_the_version_reports_the_worker_s_own_once_it_is_up(environment):
    # A kernelspec written before --language-version existed: kernel_info
    # says a bare "3" while the worker starts, then what the worker runs.
    _drop_version_flag(environment)
    with environment.applied():
        km, kc = _start(environment)
        try:
            kc.wait_for_ready(timeout=60)
            kc.execute_interactive("pass", timeout=60)  # the worker is up
            info = kc.kernel_info(reply=True, timeout=30)["content"]
            assert info["language_info"]["version"] == platform.python_version()
            assert "starting" not in info["banner"]
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def test_kernel_info_on_control_never_waits_for_the_worker(gated):
    # xeus answers control requests on one thread: a kernel_info there that
    # waited for a held worker would also hold every interrupt and shutdown.
    _drop_version_flag(gated)
    with gated.applied():
        km, kc = _start(gated)
        try:
            request = kc.session.msg("kernel_info_request", {})
            kc.control_channel.send(request)
            reply = kc.get_control_msg(timeout=30)
            assert reply["parent_header"]["msg_id"] == request["header"]["msg_id"]
            assert reply["content"]["language_info"]["version"] == "3"
            assert "sandbox: starting" in reply["content"]["banner"]
            interrupt = kc.session.msg("interrupt_request", {})
            kc.control_channel.send(interrupt)
            assert kc.get_control_msg(timeout=30)["msg_type"] == "interrupt_reply"
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


@pytest.mark.parametrize("cell_waiting", [False, True], ids=["idle", "cell-waiting"])
def test_a_shutdown_while_the_worker_is_held_leaves_no_process(gated, cell_waiting):
    # The stop kills the held worker (well before the 15 s init timeout and
    # the client's kill); a cell waiting for it must not then start a fresh
    # one that outlives the kernel.
    with gated.applied():
        km, kc = _start(gated)
        try:
            kc.wait_for_ready(timeout=30)
            pid = km.provisioner.process.pid
            if cell_waiting:
                _first_of(kc, kc.execute("print('never')"))  # busy: it waits
            deadline = time.monotonic() + 30
            family = descendants(pid)
            while not family and time.monotonic() < deadline:
                time.sleep(0.05)
                family = descendants(pid)
            assert family, "the held worker should be a process of the kernel"
        finally:
            kc.stop_channels()
        process = km.provisioner.process
        km.shutdown_kernel(now=False)  # a shutdown_request, then (late) a kill
        # 0: the kernel stopped the held worker and left by itself.
        assert process.wait(30) == 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (any(alive(p) for p in family) or _held(gated)):
            time.sleep(0.05)
        assert not [p for p in family if alive(p)]
        assert not _held(gated), "a worker was started after the shutdown"


def _held(environment):
    """Pids of processes still running the gate wrapper of `environment`."""
    wrapper = str(environment.workspace.parent / "runtime" / "bin" / "python")
    held = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if wrapper.encode() in argv and alive(int(entry)):
            held.append(int(entry))
    return held


@pytest.mark.parametrize("version", ["", "3.11\n", "3; rm -rf /", "x" * 40])
def test_a_version_that_is_not_a_plain_word_is_refused(version, tmp_path):
    from jupyter_support import KERNEL_BINARY, kernel_missing_reason

    if kernel_missing_reason():
        pytest.skip(kernel_missing_reason())
    done = subprocess.run(
        [
            str(KERNEL_BINARY),
            "-f",
            str(tmp_path / "c.json"),
            "--python",
            sys.executable,
            "--repo-root",
            str(tmp_path),
            "--language-version",
            version,
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and "usage:" in done.stderr


def test_a_client_shown_the_starting_banner_gets_the_sandbox_warning_with_its_first_cell():
    # jupyter console shows one banner, at start: a kernel whose sandbox
    # turns out degraded says so on the first cell's stderr instead.
    from jupyter_support import kernel_missing_reason

    if kernel_missing_reason():
        pytest.skip(kernel_missing_reason())
    environment = KernelEnvironment(sandbox_mode="auto")
    try:
        _respec(environment, _gated_python(environment))
        with environment.applied():
            os.environ["OPENAI4S_KERNEL_BWRAP"] = "/nonexistent/bwrap"
            km, kc = _start(environment)
            try:
                kc.wait_for_ready(timeout=30)
                info = kc.kernel_info(reply=True, timeout=30)["content"]
                assert "sandbox: starting (mode auto" in info["banner"]
                msg_id = kc.execute("print('ran')")
                _open_gate(environment)
                outputs = _outputs_until_idle(kc, msg_id)
                assert _reply_to(kc, msg_id)["status"] == "ok"
                stderr = "".join(
                    m["content"]["text"]
                    for m in outputs
                    if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"
                )
                assert "sandbox" in stderr.lower() and "bwrap" in stderr, stderr
                assert stdout_of(outputs) == "ran\n"
                # Said once: the next cell is quiet.
                msg_id = kc.execute("print('again')")
                outputs = _outputs_until_idle(kc, msg_id)
                assert [m for m in outputs if m["msg_type"] == "stream"][0]["content"][
                    "name"
                ] == "stdout"
            finally:
                kc.stop_channels()
                km.shutdown_kernel(now=True)
    finally:
        environment.cleanup()
