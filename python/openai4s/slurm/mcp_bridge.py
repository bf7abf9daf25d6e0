"""One Slurm kernel for the MCP server, over a pipe.

    python -m openai4s.slurm.mcp_bridge

The MCP server (C++) drives local kernels itself; a kernel on Slurm it
starts through this process, which starts it exactly as Jupyter does:
jupyter_client's KernelManager with an `openai4s-*-slurm` kernelspec, hence
the `openai4s-slurm` provisioner (sbatch, the private handoff, polling,
scancel, the job's record). No second launcher: this file only relays.

The pipe carries one JSON object per line. Requests on stdin:

    {"op": "start", "kernel_name": K, "cwd": DIR}
    {"op": "execute", "code": C}      (one at a time)
    {"op": "interrupt"}                (while a cell runs; no answer)
    {"op": "restart"}
    {"op": "shutdown"}                 (also at end of input: no job outlives
                                        the server)

Answers on stdout: {"op": "started"|"restarted", "job_id", "node"}, for a
cell any number of {"op": "stdout"|"stderr", "text"} and
{"op": "display", "bundle"} and then {"op": "done", "response"} (the
response in the shape the C++ kernel manager gives: stdout, stderr, error
text, interrupted), {"op": "shut_down"}, or {"op": "failed", "error"}.
Logs go to stderr.
"""

import json
import os
import sys
import threading
import time

_OUT = threading.Lock()
#: Seconds between checks that the job still runs while a cell does.
_ALIVE_EVERY = 1.0


def send(message):
    with _OUT:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


class Bridge:
    def __init__(self):
        self.km = None
        self.kc = None
        self.cell = None  # the running cell's thread

    def start(self, request):
        from jupyter_client.manager import KernelManager

        self.km = KernelManager(kernel_name=request["kernel_name"])
        self.km.start_kernel(cwd=request.get("cwd") or None)
        self._connect()
        return {"op": "started", **self._where()}

    def _connect(self):
        if self.kc is not None:
            self.kc.stop_channels()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=self.km.provisioner.start_timeout)

    def _where(self):
        provisioner = self.km.provisioner
        return {"job_id": provisioner.job_id, "record": provisioner.record}

    def restart(self):
        self._wait_for_cell()
        self.km.restart_kernel(now=True)
        self._connect()
        return {"op": "restarted", **self._where()}

    def shutdown(self):
        if self.km is not None and self.km.has_kernel:
            if self.cell is not None:
                self.km.interrupt_kernel()
            self._wait_for_cell()
            if self.kc is not None:
                self.kc.stop_channels()
            self.km.shutdown_kernel(now=self.cell is not None)
        return {"op": "shut_down"}

    def _wait_for_cell(self):
        if self.cell is not None:
            self.cell.join()
            self.cell = None

    def execute(self, code):
        self._wait_for_cell()
        self.cell = threading.Thread(target=self._run_cell, args=(code,), daemon=True)
        self.cell.start()

    def _run_cell(self, code):
        try:
            response = Cell(self.km, self.kc).run(code)
        except Exception as error:  # the job ended, the channel broke
            response = {"stdout": "", "error": f"KernelDied: {error}"}
        send({"op": "done", "response": response})


class Cell:
    """One execute_request: its output relayed as it comes, then the
    response in the C++ kernel manager's shape."""

    def __init__(self, km, kc):
        self.km, self.kc = km, kc
        self.out = {"stdout": [], "stderr": []}
        self.error = None
        self.interrupted = False

    def run(self, code):
        msg_id = self.kc.execute(code, allow_stdin=False)
        idle = False
        checked = time.monotonic()
        while not idle:
            try:
                msg = self.kc.get_iopub_msg(timeout=_ALIVE_EVERY)
            except Exception:  # queue.Empty: nothing yet
                msg = None
            if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                idle = self._take(msg)
            if time.monotonic() - checked >= _ALIVE_EVERY:
                checked = time.monotonic()
                if not self.km.is_alive():
                    reason = getattr(self.km.provisioner, "exit_reason", None) or "it ended"
                    raise RuntimeError(f"the kernel's Slurm job is gone: {reason}")
        return {
            "stdout": "".join(self.out["stdout"]),
            "stderr": "".join(self.out["stderr"]),
            "error": self.error,
            "interrupted": self.interrupted,
        }

    def _take(self, msg):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status":
            return content.get("execution_state") == "idle"
        if kind == "stream":
            name = "stderr" if content.get("name") == "stderr" else "stdout"
            self.out[name].append(content.get("text", ""))
            send({"op": name, "text": content.get("text", "")})
        elif kind in ("display_data", "update_display_data", "execute_result"):
            bundle = {"data": content.get("data", {})}
            if kind == "execute_result":
                bundle["execute_result"] = True
            send({"op": "display", "bundle": bundle})
        elif kind == "error":
            self.interrupted = content.get("ename") == "KeyboardInterrupt"
            # The worker's own traceback text, as the local kernel's
            # response carries it (its last line names the exception).
            lines = list(content.get("traceback") or [])
            self.error = "\n".join(lines) or f"{content.get('ename')}: {content.get('evalue')}"
        return False


def handle(bridge, request):
    op = request.get("op")
    if op == "start":
        return bridge.start(request)
    if op == "execute":
        bridge.execute(request.get("code", ""))
        return None
    if op == "interrupt":
        if bridge.km is not None:
            bridge.km.interrupt_kernel()
        return None
    if op == "restart":
        return bridge.restart()
    if op == "shutdown":
        return bridge.shutdown()
    return {"op": "failed", "error": f"unknown op {op!r}"}


def main():
    bridge = Bridge()
    try:
        for line in sys.stdin:
            try:
                request = json.loads(line)
                answer = handle(bridge, request)
            except Exception as error:
                answer = {"op": "failed", "error": f"{type(error).__name__}: {error}"}
                request = {}
            if answer is not None:
                send(answer)
            if request.get("op") == "shutdown":
                return 0
    finally:
        bridge.shutdown()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
