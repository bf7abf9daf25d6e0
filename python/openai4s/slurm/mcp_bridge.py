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
    {"op": "answer", "value": V}       (to an "ask", while its cell runs)
    {"op": "answer", "cannot_ask": true}  (the client shows no prompts)
    {"op": "variables", "limit": N}    (between cells)
    {"op": "restart"}
    {"op": "shutdown"}                 (also at end of input: no job outlives
                                        the server)

Answers on stdout: {"op": "job", "job_id"} as soon as a start or restart
submitted its job (so the server can scancel it should this process die
before it answers), {"op": "started"|"restarted", "job_id", "node"}, for a
cell any number of {"op": "stdout"|"stderr", "text"},
{"op": "display", "bundle"} and {"op": "ask", "prompt"} (the kernel's
approval question, its input_request) and then {"op": "done", "response"}
(the response in the shape the C++ kernel manager gives: stdout, stderr,
error text, interrupted), {"op": "variables", "variables", "truncated"},
{"op": "shut_down"}, or {"op": "failed", "error"}. Logs go to stderr.

While a kernel runs, this process keeps its job's lease: the provisioner's
`lease` (OPENAI4S_SLURM_LEASE_S, default 60 s) makes the job end when its
launcher stops renewing it, so a killed server leaves no job running.
"""

import json
import os
import queue
import sys
import threading
import time
import uuid

_OUT = threading.Lock()
#: Seconds between checks that the job still runs while a cell does.
_ALIVE_EVERY = 1.0
#: Seconds a running cell waits for output before it looks for requests.
_POLL = 0.1
#: The job's lease when OPENAI4S_SLURM_LEASE_S does not set it (seconds).
_LEASE = 60.0
#: The Jupyter kernel's comm for the namespace's variables
#: (src/jupyter/variables_comm.h) and how long it may take to answer.
_VARIABLES_TARGET = "openai4s.variables"
_VARIABLES_WAIT = 60.0
#: The input_replies the Jupyter kernel understands from a relaying client
#: (src/host/approval_text.h): "this client cannot show approval prompts"
#: (a denial with that reason, as the MCP server gives for a local kernel)
#: and "no input channel" (the cell's input() fails, as a local kernel's).
CLIENT_CANNOT_ASK = "\x1bopenai4s:client-cannot-ask"
NO_INPUT = "\x1bopenai4s:no-input"
#: How the Jupyter kernel's approval prompts begin (kApprovalPromptPrefix);
#: a cell's own prompt never does.
_APPROVAL_PROMPT = "openai4s: "


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
        #: When the running cell was last interrupted (None: it was not).
        self.interrupted_at = None

    def next_request(self):
        if self.deferred:
            return self.deferred.pop(0)
        return self.requests.get()

    def start(self, request):
        from jupyter_client.manager import KernelManager
        from traitlets.config import Config

        config = Config()
        config.SlurmProvisioner.lease = lease_seconds()
        self.km = KernelManager(kernel_name=request["kernel_name"], config=config)
        with JobReporter(self.km):
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
        with JobReporter(self.km):
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
            self.interrupted_at = time.monotonic()

    def variables(self, limit):
        """The worker's listing, through the kernel's variables comm."""
        comm_id = uuid.uuid4().hex
        content = {"comm_id": comm_id, "target_name": _VARIABLES_TARGET, "data": {"limit": limit}}
        self.kc.shell_channel.send(self.kc.session.msg("comm_open", content))
        deadline = time.monotonic() + _VARIABLES_WAIT
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=_POLL)
            except queue.Empty:
                continue
            if msg["content"].get("comm_id") != comm_id:
                continue
            data = msg["content"].get("data") or {}
            if msg["msg_type"] == "comm_close" or "error" in data:
                why = data.get("error") or "the kernel has no variables comm"
                return {"op": "failed", "error": why}
            if msg["msg_type"] == "comm_msg":
                return {"op": "variables", **data}
        return {
            "op": "failed",
            "error": f"the kernel did not list its variables in {_VARIABLES_WAIT:g} s",
        }

    def answer(self, request):
        """The person's answer (or the client's inability) to the kernel's
        approval question."""
        value = CLIENT_CANNOT_ASK if request.get("cannot_ask") else str(request.get("value", ""))
        self.kc.input(value)

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
            op = request.get("op") if request is not None else None
            if op == "answer":
                self.answer(request)
                continue
            self.interrupt()
            if op == "interrupt":
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
        self.bridge.interrupted_at = None
        # The kernel asks its approvals on stdin: relayed to the server,
        # which puts them to the MCP client.
        msg_id = kc.execute(code, allow_stdin=True)
        idle = False
        checked = time.monotonic()
        while not idle:
            try:
                msg = kc.get_iopub_msg(timeout=_POLL)
            except queue.Empty:
                msg = None
            if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                idle = self._take(msg)
            self._relay_question(kc)
            self.bridge.take_requests_while_running()
            self._interrupt_again(idle)
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

    def _interrupt_again(self, idle):
        """An interrupt message that lands before the cell's code runs is
        lost: it is sent again each second until the cell ends, as the
        server re-sends SIGINT to a local kernel's worker."""
        at = self.bridge.interrupted_at
        if idle:
            self.bridge.interrupted_at = None
        elif at is not None and time.monotonic() - at >= _ALIVE_EVERY:
            self.bridge.interrupt()

    def _relay_question(self, kc):
        try:
            msg = kc.get_stdin_msg(timeout=0)
        except queue.Empty:
            return
        if msg["msg_type"] != "input_request":
            return
        prompt = msg["content"].get("prompt", "")
        if prompt.startswith(_APPROVAL_PROMPT):
            send({"op": "ask", "prompt": prompt})
        else:
            # A cell's own input(): the MCP server has no channel for it;
            # the kernel turns this reply into the cell's error, as a local
            # kernel's input() fails.
            kc.input(NO_INPUT)

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
    if op == "variables":
        return bridge.variables(request.get("limit", 200))
    if op == "answer":
        return None  # its cell ended first: nobody asks any more
    if op == "restart":
        return bridge.restart()
    if op == "shutdown":
        return bridge.shutdown()
    return {"op": "failed", "error": f"unknown op {op!r}"}


def lease_seconds():
    text = os.environ.get("OPENAI4S_SLURM_LEASE_S", "")
    try:
        return float(text) if text else _LEASE
    except ValueError:
        raise SystemExit(f"OPENAI4S_SLURM_LEASE_S must be a number of seconds, not {text!r}")


class JobReporter:
    """While a start or restart waits for its job, reports the job's id as
    soon as sbatch gave it: a server that sees this process die scancels
    it (the start itself may take minutes in a queue)."""

    def __init__(self, km):
        self.km = km
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self.reported = getattr(self.km.provisioner, "job_id", None)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def _watch(self):
        while not self.done.wait(0.05):
            job_id = getattr(self.km.provisioner, "job_id", None)
            if job_id and job_id != self.reported:
                self.reported = job_id
                send({"op": "job", "job_id": job_id})


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
