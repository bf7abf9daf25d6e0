"""The warm pool and the standby restart (issue 28) through the Python API,
with real workers, the sandbox off and enforced: a claimed kernel is a
plain Kernel in a fresh workspace; no worker is handed out twice or after
it died; a broken sandbox says why at claim; nothing is left running."""

import os
import select
import signal
import time

import pytest

import openai4s
from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import SandboxUnavailableError, sandbox_for

from sandbox_support import process_running


def _gone(pids, within=10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(process_running(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _kill_and_wait(pid):
    """SIGKILL, then wait for the exit as a pidfd reports it (what the pool
    looks at: /proc shows a zombie a moment before the exit is reported)."""
    fd = os.pidfd_open(pid)
    try:
        os.kill(pid, signal.SIGKILL)
        assert select.select([fd], [], [], 10)[0], f"{pid} did not exit"
    finally:
        os.close(fd)


def _stdout(kernel, code):
    result = kernel.execute(code)
    assert result["error"] is None, result
    return result["stdout"].strip()


@pytest.fixture
def pool_root(tmp_path):
    root = tmp_path / "pool"
    root.mkdir()
    return root


def _pool(sandbox_mode, pool_root, size, **kwargs):
    return openai4s.KernelPool(size, workspace_root=pool_root, sandbox=sandbox_mode, **kwargs)


def test_a_claimed_kernel_is_a_started_kernel_in_a_fresh_workspace(sandbox_mode, pool_root):
    with _pool(sandbox_mode, pool_root, 1) as pool:
        assert pool.wait_full()
        kernel = pool.claim()
        try:
            assert isinstance(kernel, Kernel)
            assert _stdout(kernel, "print(1 + 1)") == "2"
            workspace = _stdout(kernel, "import os; print(os.getcwd())")
            if sandbox_mode == "off":
                assert os.path.dirname(workspace) == str(pool_root)
            assert os.path.realpath(kernel.cwd).startswith(str(pool_root) + os.sep)
            assert os.listdir(kernel.cwd) == []
            assert kernel.sandbox_status["mode"] == sandbox_mode
            if sandbox_mode == "enforce":
                assert kernel.sandbox_status["enforced"] is True
            # The bash capability's generation is the one the host trusts.
            told = _stdout(kernel, "import os; print(os.environ['OPENAI4S_KERNEL_GENERATION'])")
            assert told == kernel.authorization_generation
        finally:
            kernel.shutdown()


def test_claims_never_share_a_worker_a_workspace_or_a_generation(sandbox_mode, pool_root):
    with _pool(sandbox_mode, pool_root, 2) as pool:
        assert pool.wait_full()
        kernels = [pool.claim() for _ in range(3)]  # the third outruns the refill or not
        try:
            for index, kernel in enumerate(kernels):
                kernel.execute(f"open('mine.txt', 'w').write('{index}')")
            assert len({k.pid for k in kernels}) == 3
            assert len({k.cwd for k in kernels}) == 3
            assert len({k.authorization_generation for k in kernels}) == 3
            for index, kernel in enumerate(kernels):
                assert _stdout(kernel, "print(open('mine.txt').read())") == str(index)
                assert "x" not in _stdout(kernel, "print(sorted(globals()))")
            # The pool refills to its size, and only with workers never used.
            assert pool.wait_full()
            used = {k.pid for k in kernels}
            fresh = pool.claim()
            try:
                assert fresh.pid not in used
            finally:
                fresh.shutdown()
        finally:
            for kernel in kernels:
                kernel.shutdown()


def _environ_generation(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        entries = f.read().split(b"\0")
    for entry in entries:
        if entry.startswith(b"OPENAI4S_KERNEL_GENERATION="):
            return entry.split(b"=", 1)[1].decode()
    return None


def _bash_with_generation(kernel, generation):
    """host.bash from a cell whose environment names `generation` (None:
    names none), as a worker that kept what it saw would present it."""
    setting = (
        "os.environ.pop('OPENAI4S_KERNEL_GENERATION', None)"
        if generation is None
        else f"os.environ['OPENAI4S_KERNEL_GENERATION'] = {generation!r}"
    )
    return _stdout(
        kernel,
        "import os\n"
        "mine = os.environ['OPENAI4S_KERNEL_GENERATION']\n"
        f"{setting}\n"
        "try:\n"
        "    print(host.bash('echo ran')['stdout'].strip())\n"
        "except RuntimeError as e:\n"
        "    print('refused:', e)\n"
        "os.environ['OPENAI4S_KERNEL_GENERATION'] = mine\n",
    )


def _bash_dispatcher(data_dir, workspace):
    """A real dispatcher on a real store for `workspace`, allowing bash."""
    from openai4s.config import Config, LLMConfig
    from openai4s.host_dispatch import build_dispatcher

    config = Config(data_dir=data_dir, llm=LLMConfig(provider="deepseek", api_key="x"))
    dispatcher = build_dispatcher(config, workspace=workspace)
    dispatcher.frame_id = dispatcher.store.new_frame(kind="turn")
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="bash",
        pattern="*",
        decision="allow",
    )
    return dispatcher


def test_a_pooled_worker_learns_its_generation_only_at_claim(tmp_path, pool_root, monkeypatch):
    monkeypatch.delenv("OPENAI4S_UNATTENDED_APPROVAL", raising=False)
    # Sandbox off: the pooled workers' environments are readable from here.
    with _pool("off", pool_root, 2) as pool:
        assert pool.wait_full()
        seen = [_environ_generation(pid) for pid in pool.worker_pids()]
        kernels = [pool.claim() for _ in range(2)]
        try:
            generations = [k.authorization_generation for k in kernels]
            assert len(set(generations)) == 2
            assert not set(generations) & set(seen)
            for index, (kernel, before) in enumerate(zip(kernels, seen)):
                kernel.dispatcher = _bash_dispatcher(tmp_path / f"data-{index}", kernel.cwd)
                told = _stdout(kernel, "import os; print(os.environ['OPENAI4S_KERNEL_GENERATION'])")
                assert told == kernel.authorization_generation
                assert _bash_with_generation(kernel, told) == "ran"
                # What the worker could have read before its claim is no
                # generation the host trusts now.
                assert _bash_with_generation(kernel, before).startswith("refused:")
        finally:
            for kernel in kernels:
                kernel.shutdown()
                if kernel.dispatcher is not None:
                    kernel.dispatcher.store.close()


def test_a_worker_killed_while_pooled_is_not_handed_out(sandbox_mode, pool_root):
    with _pool(sandbox_mode, pool_root, 1) as pool:
        assert pool.wait_full()
        (pid,) = pool.worker_pids()
        _kill_and_wait(pid)
        kernel = pool.claim()
        try:
            assert kernel.pid != pid
            assert _stdout(kernel, "print(6 * 7)") == "42"
        finally:
            kernel.shutdown()


def test_an_empty_pool_starts_a_kernel_the_normal_way(sandbox_mode, pool_root):
    with _pool(sandbox_mode, pool_root, 0) as pool:
        kernel = pool.claim()
        try:
            assert _stdout(kernel, "print('ok')") == "ok"
            assert os.path.dirname(kernel.cwd) == str(pool_root)
        finally:
            kernel.shutdown()


def test_a_broken_sandbox_says_why_at_claim_and_the_pool_stays_usable(monkeypatch, pool_root):
    monkeypatch.setenv("OPENAI4S_KERNEL_BWRAP", "/nonexistent/bwrap")
    with openai4s.KernelPool(2, workspace_root=pool_root, sandbox="enforce") as pool:
        assert pool.wait_full() is False  # a start failed: no hang
        with pytest.raises(SandboxUnavailableError, match="bwrap"):
            pool.claim()
        assert pool.ready == 0


def test_bad_pool_arguments_are_refused_clearly(pool_root):
    with pytest.raises(ValueError, match="size"):
        openai4s.KernelPool(-1, workspace_root=pool_root)
    with pytest.raises(NotADirectoryError):
        openai4s.KernelPool(1, workspace_root=pool_root / "missing")


def test_closing_a_full_pool_leaves_no_process(sandbox_mode, pool_root):
    pool = _pool(sandbox_mode, pool_root, 2)
    assert pool.wait_full()
    pids = pool.worker_pids()
    assert len(pids) == 2 and all(process_running(pid) for pid in pids)
    memory = pool.memory()
    # Two idle interpreters: megabytes each, reported, not zero.
    assert memory["workers"] == 2 and memory["rss_bytes"] > 2 * 4 * 1024 * 1024
    pool.close()
    assert _gone(pids)
    # The workspaces made for workers nobody claimed go with them.
    assert os.listdir(pool_root) == []
    pool.close()  # idempotent


# -- the standby ------------------------------------------------------------


def _standby_kernel(sandbox_mode, workspace):
    return Kernel(
        cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode=sandbox_mode), standby=True
    )


def test_restart_swaps_in_the_standby_keeping_files_dropping_the_namespace(sandbox_mode, workspace):
    kernel = _standby_kernel(sandbox_mode, workspace)
    try:
        kernel.execute("x = 1\nopen('kept.txt', 'w').write('here')")
        assert kernel._core.wait_standby()
        standby = kernel._core.standby_pid
        if sandbox_mode == "off":
            # Spawned knowing no generation: it is told one at the swap.
            assert _environ_generation(standby) is None
        old_pid, old_generation = kernel.pid, kernel.authorization_generation
        kernel.restart()
        assert kernel.pid == standby != old_pid
        assert kernel.authorization_generation != old_generation
        assert _gone([old_pid])
        result = kernel.execute("x")
        assert "NameError" in (result["error"] or "")
        assert _stdout(kernel, "print(open('kept.txt').read())") == "here"
        told = _stdout(kernel, "import os; print(os.environ['OPENAI4S_KERNEL_GENERATION'])")
        assert told == kernel.authorization_generation
        if sandbox_mode == "enforce":
            # Interrupts reach the new worker: the sandbox pinned it.
            kernel.execute("import time")
            assert kernel.sandbox_status["state"] == "enabled"
            assert kernel.interrupt().delivered
        # And the next standby is started again.
        assert kernel._core.wait_standby()
        assert kernel._core.standby_pid not in (None, standby)
    finally:
        kernel.shutdown()


def test_a_standby_killed_while_waiting_is_replaced_not_used(sandbox_mode, workspace):
    kernel = _standby_kernel(sandbox_mode, workspace)
    try:
        assert kernel._core.wait_standby()
        standby = kernel._core.standby_pid
        _kill_and_wait(standby)
        kernel.restart()
        assert kernel.pid != standby
        assert _stdout(kernel, "print(2 + 2)") == "4"
        assert kernel._core.wait_standby()
        assert process_running(kernel._core.standby_pid)
    finally:
        kernel.shutdown()


def test_shutdown_leaves_neither_worker_nor_standby(sandbox_mode, workspace):
    kernel = _standby_kernel(sandbox_mode, workspace)
    assert kernel._core.wait_standby()
    pids = [kernel.pid, kernel._core.standby_pid]
    kernel.shutdown()
    assert _gone(pids)


def test_without_standby_restart_starts_a_new_worker(sandbox_mode, workspace):
    kernel = Kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode=sandbox_mode))
    try:
        assert kernel._core.wait_standby() is False
        assert kernel._core.standby_pid is None
        kernel.restart()
        assert _stdout(kernel, "print('fresh')") == "fresh"
    finally:
        kernel.shutdown()


def test_an_r_kernel_restarts_into_its_standby(sandbox_mode, workspace):
    from openai4s.kernel.r_kernel import find_rscript, r_argv

    try:
        rscript = find_rscript().rscript
    except RuntimeError as exc:
        pytest.skip(f"no R here: {exc}")
    kernel = Kernel(
        cwd=str(workspace),
        mode="r",
        argv=r_argv(rscript),
        capture_sinks=True,
        standby=True,
        sandbox=sandbox_for(str(workspace), mode=sandbox_mode),
    )
    try:
        assert _stdout(kernel, "x <- 41; cat(x + 1)") == "42"
        assert kernel._core.wait_standby()
        standby = kernel._core.standby_pid
        kernel.restart()
        assert kernel.pid == standby
        # The standby's own output fifos came with it.
        assert _stdout(kernel, "cat(exists('x'), 2 + 2)") == "FALSE 4"
        told = _stdout(kernel, "cat(Sys.getenv('OPENAI4S_KERNEL_GENERATION'))")
        assert told == kernel.authorization_generation
    finally:
        kernel.shutdown()
