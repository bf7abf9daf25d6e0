"""Kernel lifecycle through real workers: no leaked processes, a usable
kernel after every failure, and the GIL free while a cell runs."""

import os
import signal
import threading
import time
import uuid

import pytest

from openai4s.kernel import Kernel

from manager_support import pids_with_marker, process_exists


def _spawn_grandchild(kernel):
    """Starts a long sleeper from a cell; returns its host pid."""
    marker = f"o4s-grandchild-{uuid.uuid4().hex}"
    result = kernel.execute(
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)',"
        f" {marker!r}])\n"
    )
    assert result["error"] is None, result
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pids = pids_with_marker(marker)
        if pids:
            return pids[0]
        time.sleep(0.02)
    raise AssertionError("the cell's subprocess never appeared")


def _wait_gone(pid, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not process_exists(pid):
            return True
        time.sleep(0.02)
    return False


def test_shutdown_leaves_nothing_of_the_worker_group_running(tmp_path):
    k = Kernel(cwd=tmp_path)
    worker = k.pid
    grandchild = _spawn_grandchild(k)
    k.shutdown()
    assert _wait_gone(worker)
    assert _wait_gone(grandchild), "a cell's subprocess outlived its kernel's shutdown"


def test_restart_ends_the_old_group_and_starts_clean(kernel):
    old_worker = kernel.pid
    grandchild = _spawn_grandchild(kernel)
    kernel.execute("x = 1")
    kernel.restart()
    assert kernel.pid != old_worker
    assert _wait_gone(old_worker) and _wait_gone(grandchild)
    assert kernel.execute("print('x' in globals())")["stdout"].strip() == "False"


def test_restart_while_a_cell_runs_gives_that_cell_a_clear_error(kernel):
    outcome = {}

    def run():
        try:
            outcome["result"] = kernel.execute("import time\ntime.sleep(60)")
        except RuntimeError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    kernel.restart()
    thread.join(timeout=20)
    assert not thread.is_alive()
    # Either the cell was interrupted by the graceful close or it saw its
    # worker go away; both are one terminal reply, and the kernel is usable.
    assert "result" in outcome or "exited unexpectedly" in str(outcome["error"])
    assert kernel.execute("print(1 + 1)")["stdout"].strip() == "2"


def test_kill_worker_then_execute_fails_clearly_and_restart_recovers(kernel):
    kernel.kill_worker()
    assert not kernel.is_alive()
    with pytest.raises(RuntimeError, match="not alive"):
        kernel.execute("1")
    kernel.restart()
    assert kernel.execute("print('back')")["stdout"] == "back\n"


def test_the_gil_is_free_while_a_cell_runs(kernel):
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        kernel.execute("import time\ntime.sleep(0.5)")
    finally:
        stop.set()
        spinner.join()
    assert len(ticks) > 50, "another Python thread was starved during execute"


def test_an_on_chunk_that_raises_is_reported_after_the_cell_and_aligned(kernel):
    def explode(_text):
        raise ValueError("watcher broke")

    with pytest.raises(ValueError, match="watcher broke"):
        kernel.execute("print('a')\nprint('b')", on_chunk=explode)
    assert kernel.execute("print('next')")["stdout"] == "next\n"


def test_interrupt_is_clean_and_fast_every_time(kernel):
    kernel.execute("marker = 5")
    for _ in range(5):
        started = threading.Event()
        box = {}

        def run():
            box["r"] = kernel.execute(
                "print('go', flush=True)\nimport time\ntime.sleep(30)",
                on_chunk=lambda _t: started.set(),
            )

        thread = threading.Thread(target=run)
        thread.start()
        assert started.wait(10)
        time.sleep(0.05)
        assert kernel.interrupt()
        thread.join(timeout=5)
        assert not thread.is_alive()
        assert box["r"]["interrupted"] is True
    assert kernel.execute("print(marker)")["stdout"].strip() == "5"


def test_stdin_reads_cannot_eat_protocol_frames(kernel):
    result = kernel.execute("import sys\nprint(repr(sys.stdin.read()))")
    assert result["stdout"].strip() == "''"
    assert kernel.execute("print('aligned')")["stdout"] == "aligned\n"


def test_secrets_in_the_host_environment_never_reach_the_worker(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI4S_LLM_API_KEY", "sk-never-in-a-worker")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-never")
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent/evil.so")
    with Kernel(cwd=tmp_path) as k:
        result = k.execute(
            "import os\nprint(sorted(k for k in os.environ "
            "if 'KEY' in k or 'TOKEN' in k or k.startswith('LD_')))"
        )
    assert result["stdout"].strip() == "[]"


def test_the_worker_environment_names_the_workspace(tmp_path):
    with Kernel(cwd=tmp_path) as k:
        result = k.execute("import os\nprint(os.environ['OPENAI4S_WORKSPACE'], os.getcwd())")
    workspace, cwd = result["stdout"].split()
    assert workspace == cwd == str(tmp_path.resolve())
    assert os.path.isdir(workspace)


def test_the_worker_s_malloc_settings_stay_out_of_cells_and_their_children(monkeypatch, tmp_path):
    # A user's own GLIBC_TUNABLES is not allowlisted and never reaches the worker.
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.check=3")
    with Kernel(cwd=tmp_path) as k:
        with open(f"/proc/{k.pid}/environ", "rb") as spawned:
            at_exec = dict(
                entry.split(b"=", 1) for entry in spawned.read().split(b"\0") if b"=" in entry
            )
        result = k.execute(
            "import os, subprocess\n"
            "print(os.environ.get('GLIBC_TUNABLES'))\n"
            "print(subprocess.run(['sh', '-c', 'echo ${GLIBC_TUNABLES:-unset}'],"
            " capture_output=True, text=True).stdout.strip())"
        )
    # Given to the worker at exec, where glibc reads it ...
    assert at_exec[b"GLIBC_TUNABLES"].startswith(b"glibc.malloc.mmap_threshold=")
    # ... and gone before the first cell: neither the cell nor its child sees it.
    assert result["error"] is None, result["error"]
    assert result["stdout"] == "None\nunset\n"


@pytest.mark.parametrize("mode", ["off", "auto-without-bubblewrap"])
def test_shutting_down_a_busy_kernel_interrupts_its_cell(monkeypatch, tmp_path, mode):
    # The close ladder's SIGINT rung reaches the cell whatever runs the
    # worker (directly, or a sandbox fallen back to running it directly):
    # its finally runs and the worker leaves through its own shutdown path.
    # (The enforced sandbox has its own test in tests/python/sandbox.)
    if mode == "off":
        monkeypatch.setenv("OPENAI4S_KERNEL_SANDBOX", "off")
    else:
        monkeypatch.setenv("OPENAI4S_KERNEL_SANDBOX", "auto")
        monkeypatch.setenv("OPENAI4S_KERNEL_BWRAP", "/nonexistent/o4s-bwrap")
    k = Kernel(cwd=tmp_path)
    cell = (
        "import time\n"
        "open('started.txt', 'w').close()\n"
        "try:\n"
        "    time.sleep(60)\n"
        "finally:\n"
        "    open('stopped.txt', 'w').write('cell ended cleanly')\n"
    )
    runner = threading.Thread(target=lambda: k.execute(cell))
    runner.start()
    deadline = time.monotonic() + 10
    while not (tmp_path / "started.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    k.shutdown()
    runner.join(10)
    assert not runner.is_alive()
    assert (tmp_path / "stopped.txt").read_text() == "cell ended cleanly"


def _wholly_dead(pid):
    """Reaped, or a zombie whose every thread has exited: only then are its
    descriptors closed (a killed leader shows "Z" while its other threads
    still hold the process's files)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z" and tasks == [str(pid)]


def test_a_worker_killed_before_its_host_call_is_answered_is_reported_as_exited(tmp_path):
    # The reply to a host call meets a closed pipe (the worker died between
    # its call and our answer, before its exit was seen): the cell's error
    # must say the worker exited, not that a pipe broke.
    holder = {}

    def kill_then_answer(method, args):
        pid = holder["kernel"].pid
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not _wholly_dead(pid) and time.monotonic() < deadline:
            time.sleep(0.002)
        # The last close of a dying process's files may be left to a kernel
        # work queue for a tick or so: let it run, so the reply meets no reader.
        time.sleep(0.1)
        return "pong"

    k = Kernel(dispatcher=kill_then_answer, cwd=tmp_path)
    holder["kernel"] = k
    try:
        with pytest.raises(RuntimeError) as raised:
            k.execute("host._call('ping', [])\nimport time\ntime.sleep(30)")
        assert "exited unexpectedly" in str(raised.value), raised.value
        assert "killed by signal 9" in str(raised.value), raised.value
        k.restart()
        assert k.execute("1 + 1")["stdout"] == "2\n"
    finally:
        k.shutdown()
