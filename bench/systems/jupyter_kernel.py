"""Jupyter's ipykernel through jupyter_client's KernelManager and
BlockingKernelClient, driven the way that client documents: one
`execute_interactive` per cell, which returns after the kernel reports idle
(all output delivered) and the execute_reply has arrived."""

import asyncio
import subprocess

from bench.systems.base import CellResult, KernelSession


def preload():
    import jupyter_client  # noqa: F401


def start(cwd, kernel_name="python3"):
    from jupyter_client import KernelManager

    km = KernelManager(kernel_name=kernel_name)
    # The kernel's own stdout/stderr (debugger banners) are not cell output;
    # discarding them keeps the bench's terminal readable and costs nothing.
    km.start_kernel(cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kc = None
    try:
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
    except BaseException:
        _stop(km, kc)
        raise
    return JupyterSession(km, kc)


def _stop(km, kc):
    if kc is not None:
        try:
            kc.stop_channels()
        except Exception:
            pass
    try:
        km.shutdown_kernel(now=True)
    except Exception:
        pass
    # shutdown_kernel(now=True) kills and reaps; this covers a manager whose
    # shutdown raised half way.
    process = getattr(getattr(km, "provisioner", None), "process", None)
    if process is not None and process.poll() is None:
        process.kill()
        process.wait(10)


class JupyterSession(KernelSession):
    name = "jupyter"

    def __init__(self, km, kc):
        self._km = km
        self._kc = kc

    def execute(self, code, on_stream=None, stdin_reply=None, timeout=120.0):
        parts = []
        streamed = [0]
        errors = []

        def output_hook(msg):
            kind = msg["header"]["msg_type"]
            content = msg["content"]
            if kind == "stream" and content.get("name") == "stdout":
                text = content.get("text", "")
                streamed[0] += len(text)
                parts.append(text)
                if on_stream is not None:
                    on_stream(text)
            elif kind == "execute_result":
                parts.append(content.get("data", {}).get("text/plain", "") + "\n")
            elif kind == "error":
                errors.append(f"{content.get('ename')}: {content.get('evalue')}")

        def stdin_hook(msg):
            self._kc.input(stdin_reply)

        reply = self._kc.execute_interactive(
            code,
            allow_stdin=stdin_reply is not None,
            output_hook=output_hook,
            stdin_hook=stdin_hook,
            timeout=timeout,
        )
        content = reply["content"]
        status = content.get("status")
        error = None
        if status == "error":
            error = errors[0] if errors else f"{content.get('ename')}: {content.get('evalue')}"
        elif status == "aborted":
            # ipykernel aborts requests that reach it while it is still
            # discarding the queue after a failed (e.g. interrupted) cell.
            error = "aborted"
        return CellResult(
            stdout="".join(parts),
            error=error,
            interrupted=content.get("ename") == "KeyboardInterrupt",
            streamed_chars=streamed[0],
            aborted=status == "aborted",
        )

    def prepare_interrupt_thread(self):
        # jupyter_client's synchronous wrappers need an event loop on the
        # calling thread; creating it here keeps it off the latency clock.
        asyncio.set_event_loop(asyncio.new_event_loop())

    def release_interrupt_thread(self):
        loop = asyncio.get_event_loop_policy().get_event_loop()
        asyncio.set_event_loop(None)
        loop.close()

    def interrupt(self):
        self._km.interrupt_kernel()

    def restart(self):
        """jupyter_client's restart (a notebook's "Restart kernel"): the
        kernel's process stops and a new one starts on the same ports."""
        self._km.restart_kernel()
        self._kc.wait_for_ready(timeout=60)

    def worker_pids(self):
        process = getattr(self._km.provisioner, "process", None)
        return [] if process is None else [process.pid]

    def close(self):
        _stop(self._km, self._kc)
