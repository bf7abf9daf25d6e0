"""A minimal host for the real worker: spawn it over pipes, speak JSON lines.

Deliberately independent of the C++ manager: these tests pin the worker's
half of the protocol on their own.
"""

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

PYTHON_ROOT = Path(__file__).resolve().parents[3] / "python"
WORKER = PYTHON_ROOT / "openai4s" / "kernel" / "worker.py"
#: The interpreter the worker runs on; the tests need numpy/matplotlib there.
PYTHON = os.environ.get("OPENAI4S_TEST_PYTHON", sys.executable)
READ_TIMEOUT_S = 30.0


def worker_env(cwd, mode="repl", **extra):
    env = {
        "PATH": os.path.dirname(PYTHON) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "PYTHONPATH": str(PYTHON_ROOT),
        "OPENAI4S_KERNEL_MODE": mode,
        "OPENAI4S_KERNEL_GENERATION": f"kernel:{uuid.uuid4()}",
        "OPENAI4S_WORKSPACE": str(Path(cwd).resolve()),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(Path(cwd).resolve() / ".mplconfig"),
    }
    env.update({key: value for key, value in extra.items() if value is not None})
    return env


class WorkerProcess:
    """One spawned worker plus a reader thread feeding a frame queue."""

    def __init__(self, cwd, *, mode="repl", env=None, argv=None):
        self.cwd = str(cwd)
        self.env = env if env is not None else worker_env(cwd, mode)
        self.proc = subprocess.Popen(
            argv or [PYTHON, "-u", str(WORKER)],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.frames = queue.Queue()
        self.stderr_chunks = []
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drain.start()

    def _pump(self):
        for raw in self.proc.stdout:
            self.frames.put(raw.decode("utf-8"))
        self.frames.put(None)

    def _drain_stderr(self):
        while True:
            chunk = self.proc.stderr.read1(65536)
            if not chunk:
                return
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self):
        if self.proc.poll() is not None:
            # An exited worker's last words may still be in the pipe: the
            # drain thread reads them to end of file first.
            self._drain.join(timeout=10)
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def send(self, obj):
        self.send_raw(json.dumps(obj) + "\n")

    def send_raw(self, text):
        self.proc.stdin.write(text.encode("utf-8"))
        self.proc.stdin.flush()

    def read_line(self, timeout=READ_TIMEOUT_S):
        """The next raw line, or None at end of stream."""
        try:
            return self.frames.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no frame within {timeout}s; stderr:\n{self.stderr}")

    def read(self, timeout=READ_TIMEOUT_S):
        line = self.read_line(timeout)
        return None if line is None else json.loads(line)

    def handshake(self, key=None):
        init_id = f"initialize-{uuid.uuid4()}"
        self.send(
            {
                "type": "initialize",
                "id": init_id,
                "skill_attestation_key": key or secrets.token_hex(32),
            }
        )
        frame = self.read()
        assert frame == {"type": "initialized", "id": init_id}, (frame, self.stderr)
        return frame

    def execute(self, code, cell_id=None, *, on_host_call=None, on_frame=None, timeout=60):
        """Run one Cell; returns (response, frames seen before it)."""
        cell_id = cell_id or f"cell-{uuid.uuid4().hex[:8]}"
        self.send({"type": "execute", "id": cell_id, "code": code, "origin": "agent"})
        return self.collect(on_host_call=on_host_call, on_frame=on_frame, timeout=timeout)

    def collect(self, *, on_host_call=None, on_frame=None, timeout=60):
        seen = []
        while True:
            frame = self.read(timeout)
            assert frame is not None, f"worker exited; stderr:\n{self.stderr}"
            if on_frame is not None:
                on_frame(frame)
            if frame.get("type") == "response":
                self.last_raw_response = dict(frame)
                return as_the_host_finalises(frame, seen), seen
            seen.append(frame)
            if frame.get("type") == "host_call" and on_host_call is not None:
                self.answer(frame, on_host_call)

    def answer(self, frame, dispatcher):
        try:
            data = dispatcher(frame["method"], frame["args"])
        except Exception as exc:
            reply = {"type": "host_response", "id": frame["id"], "error": str(exc)}
        else:
            reply = {"type": "host_response", "id": frame["id"], "data": data}
        self.send(reply)

    def inspect(self, limit=200):
        request_id = f"variables-{uuid.uuid4()}"
        self.send({"type": "inspect_variables", "id": request_id, "limit": limit})
        frame = self.read()
        assert frame["type"] == "variables_response" and frame["id"] == request_id, frame
        return frame

    def interrupt(self):
        os.kill(self.proc.pid, signal.SIGINT)

    def shutdown(self, timeout=10):
        try:
            self.send({"type": "shutdown"})
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except Exception:
                pass


def echo_dispatcher(method, args):
    if method == "ping":
        return "pong"
    if method == "add":
        return sum(args[0]["nums"])
    if method in ("prov_resolve_path",):
        return None
    raise ValueError(f"unknown method {method}")


def snake(key):
    return "".join("_" + char.lower() if char.isupper() else char for char in key)


def decoded(args):
    """The host's view of encoded args: camelCase keys back to snake_case."""
    return [
        {snake(key): value for key, value in arg.items()} if isinstance(arg, dict) else arg
        for arg in args
    ]


class FakeBashAuthority:
    """Issues and checks one-shot bash capabilities like the real host."""

    def __init__(self, workspace, *, ttl_ms=15_000, tamper=None):
        self.workspace = str(Path(workspace).resolve())
        self.ttl_ms = ttl_ms
        self.tamper = tamper or (lambda capability: capability)
        self.calls = []
        self.issued = {}

    def __call__(self, method, args):
        self.calls.append((method, args))
        spec = decoded(args)[0] if args else None
        if method == "authorize_bash":
            return self._authorize(spec)
        if method == "consume_bash_authorization":
            capability = self.issued.get(spec["token"])
            if capability is None or capability.get("consumed"):
                return {"error": "bash authorization: unknown or expired token"}
            capability["consumed"] = True
            return {"ok": True, "token": spec["token"], "consumed_at_ms": 0}
        if method == "record_bash_result":
            self.issued.pop(spec["token"], None)
            return {"ok": True, "audit": {"status": spec["status"]}}
        return echo_dispatcher(method, args)

    def _authorize(self, spec):
        import hashlib
        import time as _time

        now = int(_time.time() * 1000)
        token = secrets.token_urlsafe(32)
        capability = {
            "version": "openai4s-bash-capability-v1",
            "token": token,
            "command_sha256": hashlib.sha256(spec["command"].encode()).hexdigest(),
            "cwd": spec["cwd"],
            "workspace": self.workspace,
            "allowed_root": self.workspace,
            "generation": spec["generation"],
            "challenge": spec["challenge"],
            "issued_at_ms": now,
            "expires_at_ms": now + self.ttl_ms,
        }
        capability = self.tamper(capability)
        self.issued[token] = dict(capability)
        return capability


def as_the_host_finalises(response, frames):
    """The response's stdout as the C++ host fills it (spec §3.8 and
    src/kernel/streamed_stdout.h): with a ``stdout_stream`` declaration,
    exactly that stream's chunks 0..N-1 in order (``head_trim`` code points
    cut before the last), else None (the host would ask the worker); with
    none, an empty stdout is every chunk of this Cell. The declaration never
    reaches a caller."""
    declared = response.pop("stdout_stream", None)
    chunks = [
        frame
        for frame in frames
        if frame.get("type") == "stdout_chunk"
        and frame.get("id") == response.get("id")
        and frame.get("text")
    ]
    if response.get("stdout"):
        return response
    if declared is None:
        if chunks:
            response["stdout"] = "".join(chunk["text"] for chunk in chunks)
        return response
    mine = [
        chunk
        for chunk in chunks
        if chunk.get("stream") == declared["stream"] and chunk.get("seq", 0) < declared["chunks"]
    ]
    if [chunk.get("seq") for chunk in mine] != list(range(declared["chunks"])):
        response["stdout"] = None  # the host would send a stdout_request
        return response
    texts = [chunk["text"] for chunk in mine]
    trim = declared.get("head_trim", 0)
    if trim > 0 and len(texts) >= 2:
        head = "".join(texts[:-1])
        response["stdout"] = head[: max(len(head) - trim, 0)] + texts[-1]
    else:
        response["stdout"] = "".join(texts)
    return response
