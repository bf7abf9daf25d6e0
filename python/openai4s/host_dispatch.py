"""The host dispatcher: how a cell acts on the host.

`build_dispatcher(cfg, workspace=...)` returns a `HostDispatcher`, callable
as `dispatcher(method, args)`. The pipeline (argument decoding, permission
gate, handler, audit row) and the one-shot shell capability live in the C++
core (`_core.HostDispatcher`); this class keeps the Python-visible surface:
settable `frame_id`, thread-bound `bash_generation_id`, and a
`_bash_authorization` whose `authorize` may be replaced on the instance.
"""

import contextlib
import os
import threading
from pathlib import Path

from openai4s import _core
from openai4s.config import get_config
from openai4s.store import get_store


class BashAuthorization:
    """The shell capability service: authorize -> consume -> record_result.
    `authorize` is looked up on this object at every call, so replacing it
    on the instance changes what the dispatcher uses."""

    def __init__(self, dispatcher):
        self._dispatcher = dispatcher

    def authorize(self, spec):
        d = self._dispatcher
        return d._core.authorize(spec, frame_id=d.frame_id, generation=d.bash_generation_id)

    def consume(self, spec):
        d = self._dispatcher
        return d._core.consume(spec, generation=d.bash_generation_id)

    def record_result(self, spec):
        d = self._dispatcher
        return d._core.record_result(spec, generation=d.bash_generation_id)


class HostDispatcher:
    def __init__(self, cfg, *, workspace=None, frame_id=None):
        self.cfg = cfg
        self.frame_id = frame_id
        self.workspace_path = None if workspace is None else Path(workspace).resolve()
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = get_store(cfg.db_path)
        self.store.seed_default_permission_rules()
        self._core = _core.HostDispatcher(
            self.store._core,
            workspace=None if self.workspace_path is None else str(self.workspace_path),
            data_dir=str(cfg.data_dir),
            artifacts_dir=str(cfg.artifacts_dir),
        )
        self._local = threading.local()
        self._default_generation = None
        self._bash_authorization = BashAuthorization(self)
        self.on_step = None
        #: Interactive approval channel: callable(request) -> "once",
        #: "conversation" or "deny", asked when a call's permission is "ask"
        #: (request: decision_id, tool, target, frame_id; and what to show a
        #: person: prompt, target_display (controls escaped, a long target
        #: visibly cut), reason_display (the cell's stated reason, escaped
        #: onto one line; "" for none), target_whole, target_length,
        #: target_sha256, and choices, without "conversation" when the target is cut or
        #: redacted, where that answer counts as "once"). None: the
        #: unattended policy decides (OPENAI4S_UNATTENDED_APPROVAL).
        self.approver = None

    def __call__(self, method, args):
        override = self._bash_authorization.__dict__.get("authorize")
        return self._core.call(
            str(method),
            list(args or []),
            frame_id=self.frame_id,
            generation=self.bash_generation_id,
            action_context=getattr(self._local, "action_context", None),
            authorize=override,
            approve=self.approver,
        )

    # -- thread-bound state ------------------------------------------------

    @property
    def bash_generation_id(self):
        """The generation bound on this thread by bind_bash_generation, else
        the default (None until someone sets it)."""
        return getattr(self._local, "generation", self._default_generation)

    @bash_generation_id.setter
    def bash_generation_id(self, value):
        self._default_generation = value

    @contextlib.contextmanager
    def bind_bash_generation(self, generation):
        missing = object()
        previous = getattr(self._local, "generation", missing)
        self._local.generation = generation
        try:
            yield
        finally:
            if previous is missing:
                del self._local.generation
            else:
                self._local.generation = previous

    @contextlib.contextmanager
    def bind_action_context(self, context):
        previous = getattr(self._local, "action_context", None)
        self._local.action_context = dict(context or {})
        try:
            yield
        finally:
            self._local.action_context = previous

    @property
    def store_paths(self):
        """Where this dispatcher keeps host state (database, artifacts): a
        kernel hides these from its cell (spec host.md §7)."""
        return [str(self.cfg.data_dir)]

    @property
    def env_paths(self):
        """The workspace's host.env library (created): a kernel shows it to
        its cell read-only, so packages installed there import at once."""
        return [self._core.env_library(self.frame_id)]

    def revoke_bash_generation(self, generation):
        """The kernel of `generation` restarted or shut down: its outstanding
        bash capabilities are refused from now on."""
        self._core.revoke_generation(str(generation))

    def set_workspace(self, path):
        self.workspace_path = None if path is None else Path(path).resolve()
        self._core.set_workspace(None if path is None else str(self.workspace_path))

    @property
    def workspace(self):
        return Path(self._core.workspace(self.frame_id))


#: The hooks the binding would call on a dispatcher; replacing any of them,
#: on the class or on the instance, sends host calls through Python again.
_HOOKS = ("__call__", "bind_bash_generation", "bind_action_context", "bind_sandbox_status")
_STOCK = {name: getattr(HostDispatcher, name, None) for name in _HOOKS}
_STOCK_AUTHORIZE = BashAuthorization.authorize


def _stock(dispatcher):
    if type(dispatcher) is not HostDispatcher:
        return False
    own = vars(dispatcher)
    if any(
        getattr(HostDispatcher, name, None) is not _STOCK[name] or name in own for name in _HOOKS
    ):
        return False
    service = own.get("_bash_authorization")
    return (
        type(service) is BashAuthorization
        and BashAuthorization.authorize is _STOCK_AUTHORIZE
        and "authorize" not in vars(service)
    )


def _native_route(kernel):
    """For the C++ core, once per request: (core dispatcher, frame_id,
    approver, action context) when `kernel`'s dispatcher is this module's
    stock one with no hook overridden, so its host calls need no Python;
    None otherwise (the dispatcher is then called as a Python object)."""
    dispatcher = vars(kernel).get("dispatcher")
    if not _stock(dispatcher):
        return None
    active = getattr(kernel, "_active_action_context", None)
    context = active() if callable(active) else {}
    return (dispatcher._core, dispatcher.frame_id, dispatcher.approver, context)


def build_dispatcher(cfg=None, delegate_fn=None, frame_id=None, workspace=None):
    """A new dispatcher for one session (the store is shared per database)."""
    return HostDispatcher(cfg or get_config(), workspace=workspace, frame_id=frame_id)
