"""`KernelPool`: kernels whose workers were started ahead of time.

    pool = openai4s.KernelPool(size=2)     # starts 2 sandboxed workers
    kernel = pool.claim()                  # a Kernel, at once
    kernel.execute("1+1")
    kernel.shutdown()
    pool.close()                           # stops the workers not claimed

Each pooled worker runs in a fresh workspace of its own (a new directory
under `workspace_root`), in its own sandbox, with the same settings a
`Kernel(cwd=that_directory, ...)` would have. A claim never returns a
worker that was used; the pool refills in the background, one start at a
time, never above `size`. A pooled worker that died while waiting is
discarded, not handed out; a pool that cannot start workers (a broken
sandbox) does not hang a claim: the claim starts a kernel the normal way,
which raises the reason; an empty pool starts a kernel the normal way. The claimed kernel is a plain `Kernel` in every respect.
"""

import os
import sys
import tempfile
import uuid

from openai4s import _core
from openai4s.kernel import manager
from openai4s.kernel.environment import PACKAGE_SOURCE_ROOT
from openai4s.kernel.sandbox_status import sandbox_for


class KernelPool:
    """`size` Python kernels kept started; `claim()` takes one.

    `sandbox` is a sandbox mode ("auto", "enforce", "off"; None: the
    environment's OPENAI4S_KERNEL_SANDBOX), `mode` and `python` as for
    `Kernel`. `standby` is passed to each claimed kernel. Workspaces are
    made under `workspace_root` (default: a new temporary directory, kept:
    claimed kernels' files live there)."""

    def __init__(
        self, size=2, *, workspace_root=None, sandbox=None, mode="repl", python=None, standby=False
    ):
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= 64:
            raise ValueError(f"size must be an int from 0 to 64 (got {size!r})")
        if workspace_root is None:
            workspace_root = tempfile.mkdtemp(prefix="openai4s-pool-")
        self.workspace_root = os.path.realpath(os.fspath(workspace_root))
        if not os.path.isdir(self.workspace_root):
            raise NotADirectoryError(f"workspace_root {self.workspace_root!r} is not a directory")
        self.size = size
        self.sandbox = sandbox
        self.mode = mode
        self.python = python or sys.executable
        self.standby = standby
        self._core = _core.WarmPoolCore(
            size=size,
            workspace_root=self.workspace_root,
            mode=str(mode),
            python=self.python,
            worker_script=manager._WORKER_SCRIPT,
            repo_root=PACKAGE_SOURCE_ROOT,
            sandbox_mode=sandbox,
            hidden_paths=[],
            idle_reply_timeout=manager._IDLE_REPLY_TIMEOUT_S,
            init_timeout=manager._SKILL_SIDECAR_INITIALIZATION_TIMEOUT_S,
        )

    def claim(self, dispatcher=None):
        """A started `Kernel` in a fresh workspace; a normal start when none
        is ready. `dispatcher` as for `Kernel` (its store must not be inside
        the workspace root)."""
        try:
            warm = self._core.claim()
        except Exception:
            # The pool's last start failed. A normal start either works
            # (the cause was passing: a worker killed while it started) or
            # raises the same reason (a broken sandbox).
            warm = None
        if warm is None:
            cwd = os.path.join(self.workspace_root, f"kernel-{uuid.uuid4()}")
            os.mkdir(cwd, 0o700)
            # The refill waits while callers start their own: under a burst
            # it would only take CPU from them.
            with self._core.fallback():
                return self._kernel(dispatcher, cwd, None)
        return self._kernel(dispatcher, warm.workspace, warm)

    def _kernel(self, dispatcher, cwd, warm):
        return manager.Kernel(
            dispatcher,
            cwd=cwd,
            mode=self.mode,
            python=self.python,
            sandbox=sandbox_for(cwd, self.sandbox),
            standby=self.standby,
            _warm=warm,
        )

    @property
    def ready(self):
        """Workers ready to be claimed now."""
        return self._core.ready

    def wait_full(self):
        """Block until the pool is full (True), or its start failed (False)."""
        return self._core.wait_full()

    def worker_pids(self):
        """The host pids of the ready workers' processes (for memory reports)."""
        return list(self._core.pids())

    def memory(self):
        """Resident memory of the ready workers, their process trees
        included: {"workers": n, "rss_bytes": total} (counted against the
        machine like any kernel's)."""
        pids = self.worker_pids()
        return {"workers": len(pids), "rss_bytes": sum(_core.tree_rss_bytes(pid) for pid in pids)}

    def close(self):
        """Stop refilling and every worker not claimed. Idempotent."""
        self._core.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
