"""One Slurm kernel for the MCP server, over a pipe.

    python -m openai4s.slurm.mcp_bridge

The MCP server (C++) drives local kernels itself; a kernel on Slurm it
starts through this process, which starts it exactly as Jupyter does:
jupyter_client's KernelManager with an `openai4s-*-slurm` kernelspec, hence
the `openai4s-slurm` provisioner (sbatch, the private handoff, polling,
scancel, the job's record). No second launcher: this file only relays.

The pipe carries one JSON object per line. Requests on stdin:

    {"op": "start", "kernel_name": K, "cwd": DIR}
    {"op": "execute", "code": C}      (one at a time; others wait for it)
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
import queue
import sys
import threading
import time

_OUT = threading.Lock()
#: Seconds between checks that the job still runs while a cell does.
_ALIVE_EVERY = 1.0
#: Seconds a running cell waits for output before it looks for requests.
_POLL = 0.1


def send(message):
    with _OUT:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


class Bridge:
    """Every jupyter_client call happens on the main thread (its sync
    wrappers each run an event loop of the calling thread; the provisioner's
    Slurm commands are subprocesses of that loop): a reader thread only
    queues the requests."""

    def __init__(self, requests):
        self.requests = requests
        self.km = None
        self.kc = None
        self.deferred = []  # requests that came while a cell ran

    def next_request(self):
        if self.deferred:
            return self.deferred.pop(0)
        return self.requests.get()

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
        self.km.restart_kernel(now=True)
        self._connect()
        return {"op": "restarted", **self._where()}

    def shutdown(self):
        if self.km is not None and self.km.has_kernel:
            if self.kc is not None:
                self.kc.stop_channels()
            self.km.shutdown_kernel()
        return {"op": "shut_down"}

    def interrupt(self):
        if self.km is not None and self.km.has_kernel:
            self.km.interrupt_kernel()

    def execute(self, code):
        try:
            response = Cell(self).run(code)
        except Exception as error:  # the job ended, the channel broke
            response = {"stdout": "", "error": f"KernelDied: {error}"}
        return {"op": "done", "response": response}

    def take_requests_while_running(self):
        """Interrupts now; anything else waits for the cell, which is
        interrupted so that it comes soon (end of input included)."""
        while True:
            try:
                request = self.requests.get_nowait()
            except queue.Empty:
                return
            self.interrupt()
            if request is not None and request.get("op") == "interrupt":
                continue
            self.deferred.append(request)


class Cell:
    """One execute_request: its output relayed as it comes, then the
    response in the C++ kernel manager's shape."""

    def __init__(self, bridge):
        self.bridge = bridge
        self.out = {"stdout": [], "stderr": []}
        self.error = None
        self.interrupted = False

    def run(self, code):
        km, kc = self.bridge.km, self.bridge.kc
        msg_id = kc.execute(code, allow_stdin=False)
        idle = False
        checked = time.monotonic()
        while not idle:
            try:
                msg = kc.get_iopub_msg(timeout=_POLL)
            except queue.Empty:
                msg = None
            if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                idle = self._take(msg)
            self.bridge.take_requests_while_running()
            if not idle and time.monotonic() - checked >= _ALIVE_EVERY:
                checked = time.monotonic()
                if not km.is_alive():
                    reason = getattr(km.provisioner, "exit_reason", None) or "it ended"
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
        return bridge.execute(request.get("code", ""))
    if op == "interrupt":
        return None  # no cell runs: nothing to interrupt
    if op == "restart":
        return bridge.restart()
    if op == "shutdown":
        return bridge.shutdown()
    return {"op": "failed", "error": f"unknown op {op!r}"}


def read_requests(requests):
    for line in sys.stdin:
        try:
            requests.put(json.loads(line))
        except ValueError:
            requests.put({"op": "unreadable"})
    requests.put(None)  # end of input


def main():
    requests = queue.Queue()
    threading.Thread(target=read_requests, args=(requests,), daemon=True).start()
    bridge = Bridge(requests)
    try:
        while (request := bridge.next_request()) is not None:
            try:
                answer = handle(bridge, request)
            except Exception as error:
                answer = {"op": "failed", "error": f"{type(error).__name__}: {error}"}
            if answer is not None:
                send(answer)
            if request.get("op") == "shutdown":
                return 0
    finally:
        bridge.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
