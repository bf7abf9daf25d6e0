"""openai4s through its public Python API: `Kernel(dispatcher=...)`.

Kernels are built unsandboxed (spec kernel.md §2.13: OPENAI4S_KERNEL_SANDBOX
=off), which is what the issue's targets are stated for; once the sandbox
exists a sandboxed variant is a second system built with `enforce`.
"""

import contextlib
import os

from bench.systems.base import CellResult, KernelSession

_SANDBOX_VARIABLE = "OPENAI4S_KERNEL_SANDBOX"


def _pong_dispatcher(method, args):
    # The host-RPC metric's dispatcher: as cheap as a dispatcher can be, so
    # the metric measures the round trip and not the handler.
    return "pong"


def preload():
    from openai4s.kernel import Kernel  # noqa: F401  (imports the C++ core)


@contextlib.contextmanager
def _sandbox_mode(mode):
    previous = os.environ.get(_SANDBOX_VARIABLE)
    os.environ[_SANDBOX_VARIABLE] = mode
    try:
        yield
    finally:
        if previous is None:
            del os.environ[_SANDBOX_VARIABLE]
        else:
            os.environ[_SANDBOX_VARIABLE] = previous


def start(cwd, sandbox="off"):
    from openai4s.kernel import Kernel

    with _sandbox_mode(sandbox):
        return Openai4sSession(Kernel(dispatcher=_pong_dispatcher, cwd=cwd), cwd)


class Openai4sSession(KernelSession):
    name = "openai4s"

    def __init__(self, kernel, cwd):
        self._kernel = kernel
        self._cwd = cwd if cwd is not None else os.getcwd()

    def execute(self, code, on_stream=None, stdin_reply=None, timeout=120.0):
        # stdin_reply is unused: the host-RPC cell calls host._call instead of
        # input(). The kernel has no per-call timeout; the interrupt metric
        # guards its own deadline.
        streamed = [0]
        on_chunk = None
        if on_stream is not None:

            def on_chunk(text):
                streamed[0] += len(text)
                on_stream(text)

        response = self._kernel.execute(code, on_chunk=on_chunk)
        return CellResult(
            stdout=response.get("stdout") or "",
            error=response.get("error"),
            interrupted=bool(response.get("interrupted")),
            streamed_chars=streamed[0],
            stdout_file=response.get("stdout_file"),
        )

    def spilled_bytes(self, result):
        if not result.stdout_file:
            return 0
        # The kernel completes the file after sending the result and before
        # it handles its next request: one untimed cell waits for that.
        self.execute("pass")
        try:
            return os.path.getsize(os.path.join(self._cwd, result.stdout_file))
        except OSError:
            return 0

    def interrupt(self):
        self._kernel.interrupt()

    def worker_pids(self):
        pid = self._kernel.pid
        return [] if pid is None else [pid]

    def close(self):
        try:
            self._kernel.shutdown()
        except Exception:
            # A worker that already died still counts as shut down; kill_worker
            # makes sure nothing of it survives.
            self._kernel.kill_worker()
