"""Types of the C++ core's Python module (src/bindings/*.cpp).

Kept by hand; tests/python/test_core_stub.py holds it to the built module
name by name and parameter by parameter, so a binding added, removed or
renamed without this file fails the suite.
"""

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeAlias

# A value decoded from a JSON frame or result (dict, list, str, int, float,
# bool or None); the core converts both ways at the boundary.
_Json: TypeAlias = Any
_PathLike: TypeAlias = str | os.PathLike[str]

# module.cpp

def signal_worker_main_thread(pid: int, signum: int) -> bool:
    """tgkill(pid, pid, signum): True iff the kernel accepted the signal."""

# native_transport.cpp

class StderrTail:
    """The bounded tail of a worker's stderr (proc/stderr_tail.h)."""

    def text(self) -> str: ...
    @property
    def seen_bytes(self) -> int: ...
    @property
    def dropped_bytes(self) -> int: ...
    @property
    def retained_bytes(self) -> int: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def budget(self) -> int: ...
    def __bool__(self) -> bool: ...
    # Yields text() once, so "".join(tail) reads like a list of chunks.
    def __iter__(self) -> Iterator[str]: ...

class ProtocolStdin:
    """Popen-like stdin of a worker: write() buffers, flush() sends."""

    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...

class WorkerProcess:
    """Popen-like view of a pipe worker's child process."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    @property
    def args(self) -> list[str]: ...
    @property
    def stdin(self) -> ProtocolStdin: ...
    def poll(self) -> int | None: ...
    # Raises subprocess.TimeoutExpired when the timeout passes.
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...
    def terminate(self) -> None: ...
    def send_signal(self, signum: int, /) -> None: ...

class PipeTransport:
    """A worker spawned on a pipe pair (kernel/pipe_transport.h)."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: _PathLike | None,
        env: Mapping[str, str],
        stderr_tail_factory: object = None,
        pass_fds: Sequence[int] = ...,
        process_started: Callable[[int], object] | None = None,
    ) -> None: ...
    # One line with its newline; "" at end of stream.
    def read_line(self) -> str: ...
    def write_line(self, line: str, /) -> bool: ...
    def alive(self) -> bool: ...
    def interrupt(self) -> bool: ...
    def kill(self) -> None: ...
    def close(self, *, graceful: bool = True) -> None: ...
    @property
    def process(self) -> WorkerProcess: ...
    @property
    def stderr_tail(self) -> StderrTail: ...

# kernel_core.cpp

class WarmWorker:
    """A started worker taken from a WarmPoolCore, to be adopted by a KernelCore."""

    @property
    def workspace(self) -> str | None: ...
    @property
    def taken(self) -> bool: ...

# VmRSS of `pid` and its descendants, in bytes (0 for a process gone).
def tree_rss_bytes(pid: int) -> int: ...

class WarmPoolCore:
    """N started sandboxed workers, each in a fresh workspace under workspace_root."""

    def __init__(
        self,
        *,
        size: int,
        workspace_root: str,
        mode: str,
        python: str,
        worker_script: str,
        repo_root: str,
        sandbox_mode: str | None,
        hidden_paths: Sequence[str],
        idle_reply_timeout: float,
        init_timeout: float,
    ) -> None: ...
    # None when the pool is empty (the caller starts a kernel normally).
    def claim(self) -> WarmWorker | None: ...
    @property
    def ready(self) -> int: ...
    def wait_full(self) -> bool: ...
    def pids(self) -> list[int]: ...
    # Around a caller's own start after a claim found none: no refill meanwhile.
    def fallback(self) -> WarmPoolFallback: ...
    def stop(self) -> None: ...

class WarmPoolFallback:
    """A caller's own start in flight; the pool's refill waits for its end."""

    def __enter__(self) -> None: ...
    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None: ...

class KernelCore:
    """The C++ kernel manager behind openai4s.kernel.manager.KernelManager."""

    def __init__(
        self,
        owner: object,
        *,
        cwd: _PathLike | None,
        mode: str,
        python: str,
        env_root: _PathLike | None,
        env_name: str | None,
        argv: Sequence[str] | None,
        worker_script: str,
        repo_root: str,
        transport_factory: Callable[[], object] | None,
        sandbox_mode: str | None = None,
        hidden_paths: Sequence[str] = ...,
        capture_sinks: bool = False,
        idle_reply_timeout: float = 30.0,
        read_paths: Sequence[str] = ...,
        standby: bool = False,
        warm: WarmWorker | None = None,
    ) -> None: ...
    def start(self, init_timeout: float) -> None: ...
    # A pooled worker instead of start(); the handle is spent either way.
    def adopt(self, warm: WarmWorker) -> None: ...
    # Waits until the standby worker is started (or cannot be); False: none.
    def wait_standby(self) -> bool: ...
    @property
    def standby_pid(self) -> int | None: ...
    def restart(self, init_timeout: float) -> None: ...
    def execute(
        self,
        code: str,
        origin: str,
        cell_id: object,
        on_chunk: Callable[[str], object] | None,
        on_display: Callable[[dict[str, _Json]], object] | None = None,
        on_input: Callable[[str, bool], str] | None = None,
        cell_name: str = "",
    ) -> dict[str, _Json]: ...
    def complete(self, code: str, cursor: int) -> dict[str, _Json]: ...
    def inspect_code(self, code: str, cursor: int, detail_level: int) -> dict[str, _Json]: ...
    def inspect_variables(self, limit: int) -> dict[str, _Json]: ...
    # (delivered, target, reason)
    def interrupt(self) -> tuple[bool, str, str | None]: ...
    def kill_worker(self) -> None: ...
    def shutdown(self) -> None: ...
    def is_alive(self) -> bool: ...
    # The seams a subclass may override (spec §3 frame reading/writing).
    def readline(self) -> _Json | None: ...
    def send(self, frame: _Json, /) -> None: ...
    def service_host_call(self, frame: _Json, /) -> None: ...
    def set_overridden(self, seam: str, overridden: bool, /) -> None: ...
    def process(self) -> WorkerProcess | Any | None: ...
    def stderr_tail(self) -> StderrTail | Any | None: ...
    def sandbox_status(self) -> dict[str, _Json] | None: ...
    @property
    def sandbox_worker_pidfd(self) -> int | None: ...
    @property
    def generation(self) -> int: ...
    @property
    def authorization_generation(self) -> str: ...
    @property
    def worker_log_tail(self) -> list[str]: ...
    @property
    def stale_stdout_chunks(self) -> int: ...
    @property
    def stale_displays(self) -> int: ...
    @property
    def malformed_frames(self) -> int: ...
    @property
    def mismatched_streams(self) -> int: ...
    @property
    def dropped_stdout_chunks(self) -> int: ...

def build_kernel_environment(
    *,
    source: Mapping[str, str | None] | None,
    mode: str,
    cwd: _PathLike | None,
    env_root: _PathLike | None,
    env_name: str | None,
    kernel_generation: str | None,
    repo_root: _PathLike | None,
    interpreter: str | None,
    default_repo_root: str,
) -> dict[str, str]: ...
def child_environment(
    *,
    cwd: _PathLike | None,
    mode: str,
    python: str,
    env_root: _PathLike | None,
    env_name: str | None,
    argv: Sequence[str] | None,
    repo_root: str,
    authorization_generation: str,
) -> dict[str, str]: ...
def name_can_carry_a_secret(name: str) -> bool: ...

# host_binding.cpp

def outside_sandbox_hint(error_text: str, cwd: str) -> str | None: ...
def host_methods() -> list[dict[str, _Json]]:
    """The host's table of methods, one dict a row: name, gate (the
    permission tool, or None), served, max_args, default_rules (a list of
    (pattern, decision))."""

class Store:
    """The SQLite store (store/store.h)."""

    @staticmethod
    def open(path: str) -> Store: ...
    @property
    def path(self) -> str: ...
    @property
    def schema_version(self) -> int: ...
    def new_frame(
        self,
        *,
        parent_id: str | None = None,
        project_id: str = "default",
        kind: str = "turn",
        name: str | None = None,
        model: str | None = None,
        depth: int = 0,
        status: str = "processing",
    ) -> str: ...
    def get_frame(self, frame_id: str, /) -> dict[str, _Json] | None: ...
    def resolve_frame_scope(
        self, frame_id: str | None, fallback_project: str = "default"
    ) -> dict[str, str]: ...
    def set_permission_rule(
        self,
        *,
        scope: str,
        scope_id: str = "",
        tool: str,
        pattern: str = "*",
        decision: str,
    ) -> str: ...
    def delete_permission_rule(self, rule_id: str, /) -> None: ...
    def seed_default_permission_rules(self, force: bool = False) -> None: ...
    def log_host_call(
        self,
        *,
        method: str,
        args: _Json,
        ok: bool,
        frame_id: str | None = None,
        result: _Json = None,
    ) -> None: ...

class HostDispatcher:
    """The host-call dispatcher (host/dispatcher.h): host.* methods, bash."""

    def __init__(
        self,
        store: Store,
        *,
        workspace: _PathLike | None,
        data_dir: str,
        artifacts_dir: str,
    ) -> None: ...
    # Raises ValueError / KeyError / FileNotFoundError / RuntimeError as the
    # handler's failure kind says.
    def call(
        self,
        method: str,
        args: _Json,
        *,
        frame_id: str | None = None,
        generation: str | None = None,
        action_context: _Json = None,
        authorize: Callable[[dict[str, _Json]], _Json] | None = None,
        approve: Callable[[dict[str, str]], str] | None = None,
    ) -> _Json: ...
    def authorize(
        self, spec: _Json, *, frame_id: str | None = None, generation: str | None = None
    ) -> _Json: ...
    def consume(self, spec: _Json, *, generation: str | None = None) -> _Json: ...
    def record_result(self, spec: _Json, *, generation: str | None = None) -> _Json: ...
    def revoke_generation(self, generation: str, /) -> None: ...
    def set_workspace(self, workspace: _PathLike | None, /) -> None: ...
    def workspace(self, frame_id: str | None = None) -> str: ...
    def env_library(self, frame_id: str | None = None) -> str: ...
