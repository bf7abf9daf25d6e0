"""`Kernel`: the Python face of the C++ kernel manager.

The execute loop, the handshake, host-call translation, inspection and the
process lifecycle all live in the C++ core (`openai4s._core.KernelCore`).
This class keeps the names and behaviours the public API promises, and turns
three instance attributes into explicit seams of the core: assigning
`_readline`, `_send` or `_service_host_call` on an instance makes the core
call that Python callable; leaving them alone keeps Python out of the path.
"""

import collections
import contextlib
import os
import sys
import threading
from collections import namedtuple

from openai4s import _core
from openai4s.kernel.environment import PACKAGE_SOURCE_ROOT
from openai4s.kernel.errors import (  # noqa: F401  (re-exported)
    KernelBusyError,
    KernelDiedError,
    KernelError,
    KernelInterruptUnavailable,
    KernelNotAliveError,
    KernelProtocolError,
    KernelRestartFailed,
    KernelStartError,
    KernelTimeoutError,
    KernelUnresponsiveError,
)
from openai4s.kernel.cell_timeout import CellWatchdog, check_timeout
from openai4s.kernel.sandbox_hint import add_hint as add_sandbox_hint
from openai4s.kernel.sandbox_status import sandbox_for

#: Seconds the worker has to answer the attestation handshake. Read at call
#: time (tests shorten it).
_SKILL_SIDECAR_INITIALIZATION_TIMEOUT_S = 15.0

#: Seconds an idle request (complete, inspect, inspect_variables) may wait
#: for the worker's answer before the worker is stopped as unresponsive.
#: Read when a Kernel is made (tests shorten it).
_IDLE_REPLY_TIMEOUT_S = 30.0

_WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")
_SEAMS = frozenset({"_readline", "_send", "_service_host_call"})


def _signal_worker_main_thread(pid, signum):
    """tgkill the worker's main thread; False where that is impossible."""
    if not sys.platform.startswith("linux"):
        return False
    return _core.signal_worker_main_thread(int(pid), int(signum))


def _check_code(code):
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, not {type(code).__name__}")
    try:
        code.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"code contains a lone surrogate (U+{ord(code[exc.start]):04X} at index "
            f"{exc.start}), which cannot be sent as UTF-8; decode the text with "
            "errors='replace' or remove the character"
        ) from None


def _check_cwd(cwd):
    """A missing or non-directory workspace is named here, the same in every
    sandbox mode, rather than surfacing as a sandbox or spawn failure."""
    if cwd is None:
        return
    if not os.path.exists(cwd):
        raise FileNotFoundError(f"kernel cwd {cwd!r} does not exist; create it or pass another")
    if not os.path.isdir(cwd):
        raise NotADirectoryError(f"kernel cwd {cwd!r} is not a directory; pass a directory")


class InterruptDelivery(namedtuple("InterruptDelivery", "delivered target reason")):
    """What `Kernel.interrupt()` did; truthy iff a signal was delivered."""

    def __bool__(self):
        return bool(self.delivered)


class Kernel:
    """A persistent worker interpreter: `execute` cells, `inspect_variables`,
    `interrupt`, `restart`, `shutdown`. Usable as a context manager.

    With `standby=True` the kernel keeps one more worker started in the
    background for its workspace, and `restart()` swaps it in (it is spawned
    with the environment of the kernel's last start). `openai4s.KernelPool`
    hands out kernels whose first worker was started ahead of time."""

    def __init__(
        self,
        dispatcher=None,
        cwd=None,
        mode="repl",
        python=None,
        env_root=None,
        env_name=None,
        argv=None,
        sandbox=None,
        read_isolation=None,
        capture_sinks=False,
        transport_factory=None,
        *,
        standby=False,
        _warm=None,
    ):
        self.dispatcher = dispatcher
        self.cwd = None if cwd is None else os.fspath(cwd)
        _check_cwd(self.cwd)
        self.mode = mode
        self.python = python or sys.executable
        self.env_root = None if env_root is None else os.fspath(env_root)
        self.env_name = env_name
        self.argv = None if argv is None else list(argv)
        self.transport_factory = transport_factory
        self.read_isolation = read_isolation
        self.capture_sinks = capture_sinks
        self._sandbox = sandbox if sandbox is not None else sandbox_for(self.cwd)
        self._core = _core.KernelCore(
            self,
            cwd=self.cwd,
            mode=str(mode),
            python=self.python,
            env_root=self.env_root,
            env_name=env_name,
            argv=self.argv,
            worker_script=_WORKER_SCRIPT,
            repo_root=PACKAGE_SOURCE_ROOT,
            transport_factory=transport_factory,
            sandbox_mode=getattr(self._sandbox, "requested_mode", None),
            hidden_paths=[os.fspath(p) for p in getattr(dispatcher, "store_paths", ()) or ()],
            capture_sinks=bool(capture_sinks),
            idle_reply_timeout=_IDLE_REPLY_TIMEOUT_S,
            read_paths=[os.fspath(p) for p in getattr(dispatcher, "env_paths", ()) or ()],
            standby=bool(standby),
            warm=_warm,
        )
        if hasattr(self._sandbox, "_bind"):
            self._sandbox._bind(self._core, remote=transport_factory is not None)
        try:
            if _warm is not None:
                self._core.adopt(_warm)
            else:
                self._core.start(_SKILL_SIDECAR_INITIALIZATION_TIMEOUT_S)
        except BaseException:
            if hasattr(self._sandbox, "close"):
                self._sandbox.close()
            raise

    # -- seams ---------------------------------------------------------------

    def __setattr__(self, name, value):
        if name in _SEAMS:
            core = self.__dict__.get("_core")
            if core is not None:
                core.set_overridden(name, not self._is_own_method(name, value))
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        object.__delattr__(self, name)
        if name in _SEAMS and "_core" in self.__dict__:
            self._core.set_overridden(name, False)

    def _is_own_method(self, name, value):
        # Re-assigning the class's own bound method (as monkeypatch's undo
        # does) restores the native path rather than routing through Python.
        func = getattr(value, "__func__", None)
        return getattr(value, "__self__", None) is self and func is getattr(type(self), name)

    def _readline(self):
        """The next frame from the worker as a dict, or None at end of stream."""
        return self._core.readline()

    def _send(self, obj):
        """Write one frame (any JSON value) to the worker and flush."""
        self._core.send(obj)

    def _service_host_call(self, frame):
        """Dispatch one host_call frame and send its host_response."""
        self._core.service_host_call(frame)

    # -- requests ------------------------------------------------------------

    def execute(
        self,
        code,
        origin="agent",
        on_chunk=None,
        *,
        cell_id=None,
        action_context=None,
        timeout=None,
        on_display=None,
        on_input=None,
        cell_name=None,
    ):
        """Run one cell; returns the response dict (stdout, stderr, error,
        interrupted, trace, guards, files_read, usage, cwd, ...; "displays"
        only when the cell displayed something).
        `action_context` (else the one bound on this thread) attributes the
        cell's host calls to an agent action in the audit log. With
        `timeout` (seconds) a cell still running then is interrupted (the
        result has `timed_out: True`); one that ignores the interrupt is
        killed with its worker (KernelTimeoutError; call restart()).
        `on_display(bundle)` receives each display live ({data, metadata,
        display_id, update}, or {"type": "clear_output", "wait"});
        `on_input(prompt, password) -> str` answers the cell's input().
        `cell_name` names the cell in its tracebacks (`<kernel:NAME>`; a
        front door passes the number its user sees); by default the worker
        numbers cells itself.
        """
        _check_code(code)
        check_timeout(timeout)
        sinks = (on_chunk, on_display, on_input, "" if cell_name is None else str(cell_name))
        if action_context is None:
            return self._execute(code, origin, sinks, cell_id, timeout)
        with self.bind_action_context(action_context):
            return self._execute(code, origin, sinks, cell_id, timeout)

    def _execute(self, code, origin, sinks, cell_id, timeout):
        response = self._run_cell(code, origin, sinks, cell_id, timeout)
        if response.get("error"):
            # A sandboxed cell missing a file that exists here: say why.
            add_sandbox_hint(response, self.sandbox_status, self.cwd or os.getcwd())
        return response

    def _run_cell(self, code, origin, sinks, cell_id, timeout):
        args = (code, str(origin), cell_id, *sinks)
        if timeout is None:
            return self._core.execute(*args)
        with CellWatchdog(self, timeout) as watchdog:
            try:
                response = self._core.execute(*args)
            except KernelNotAliveError as exc:
                if watchdog.killed:
                    raise KernelTimeoutError(watchdog.kill_message()) from exc
                raise
        watchdog.annotate(response)
        return response

    def complete(self, code, cursor):
        """Completions at `cursor` (an index into `code`): {"matches",
        "cursor_start", "cursor_end"}. Never runs the namespace's code;
        raises KernelBusyError while a cell runs."""
        return self._core.complete(code, cursor)

    def inspect(self, code, cursor, detail_level=0):
        """Help for the name at `cursor` (`obj?`; detail_level=1: `obj??`):
        {"found", "data": {"text/plain"}}. Never runs the namespace's code;
        raises KernelBusyError while a cell runs."""
        return self._core.inspect_code(code, cursor, detail_level)

    @contextlib.contextmanager
    def bind_action_context(self, context):
        """Attribute host calls made by cells this thread runs to `context`
        (a dict such as {"action_group_id", "action_id", "tool_call_id"})."""
        local = self.__dict__.setdefault("_action_context_local", threading.local())
        previous = getattr(local, "context", None)
        local.context = dict(context or {})
        try:
            yield
        finally:
            local.context = previous

    def _active_action_context(self):
        local = self.__dict__.get("_action_context_local")
        context = getattr(local, "context", None) if local is not None else None
        return dict(context) if context else {}

    def inspect_variables(self, *, limit=200):
        """List the namespace's variables without running any user hook.
        Raises KernelBusyError instead of waiting while a cell runs."""
        return self._core.inspect_variables(limit)

    def interrupt(self):
        """Deliver one SIGINT to the worker's main thread; never waits."""
        return InterruptDelivery(*self._core.interrupt())

    def kill_worker(self):
        """Last-resort stop of the worker's whole process group."""
        core = self.__dict__.get("_core")
        if core is not None:
            core.kill_worker()
        elif getattr(self, "_proc", None) is not None:
            try:
                self._proc.kill()
            except OSError:
                pass

    def restart(self):
        """Replace the worker with a fresh one (new namespace, new generation)."""
        self._core.restart(_SKILL_SIDECAR_INITIALIZATION_TIMEOUT_S)

    def shutdown(self):
        """Stop the worker: shutdown frame, then SIGINT, then group kill."""
        core = self.__dict__.get("_core")
        if core is not None:
            core.shutdown()
        sandbox = self.__dict__.get("_sandbox")
        if sandbox is not None and hasattr(sandbox, "close"):
            sandbox.close()

    def is_alive(self):
        return self._core.is_alive()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.shutdown()

    # -- state ---------------------------------------------------------------

    @property
    def _proc(self):
        return self._core.process()

    @property
    def _stderr_tail(self):
        return self._core.stderr_tail()

    @property
    def pid(self):
        proc = self._proc
        return None if proc is None else proc.pid

    @property
    def generation(self):
        return self._core.generation

    @property
    def authorization_generation(self):
        core = self.__dict__.get("_core")
        if core is None:
            return self.__dict__.get("_bare_authorization_generation")
        return core.authorization_generation

    @authorization_generation.setter
    def authorization_generation(self, value):
        if "_core" in self.__dict__:
            raise RuntimeError(
                "a local kernel's generation comes from its child environment and "
                "must not be replaced after the worker has started"
            )
        self.__dict__["_bare_authorization_generation"] = value

    @property
    def worker_log_tail(self):
        return collections.deque(self._core.worker_log_tail, maxlen=32)

    @property
    def _stale_stdout_chunks(self):
        return self._core.stale_stdout_chunks

    @property
    def malformed_frames(self):
        """Worker frames the host dropped as unparsable or over the cap."""
        return self._core.malformed_frames

    @property
    def sandbox_status(self):
        status = getattr(self._sandbox, "status", None)
        return status.to_dict() if status is not None else {}

    def _child_env(self):
        """The environment a worker of this kernel is spawned with."""
        return _core.child_environment(
            cwd=self.cwd,
            mode=str(self.mode),
            python=self.python or sys.executable,
            env_root=self.env_root,
            env_name=self.env_name,
            argv=self.argv,
            repo_root=PACKAGE_SOURCE_ROOT,
            authorization_generation=self.authorization_generation,
        )
