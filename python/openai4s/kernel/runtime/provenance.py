"""Object-level lineage: which artifact versions a written file came from.

Observational and partial: it never breaks user code, and losing a tag is
acceptable where inventing one is not. Tags are frozensets stored on the
object (attribute ``_openai4s_src``) or, for objects that refuse attributes,
in a bounded side table.

Reads are tagged lazily. A file opened for reading is tagged with a *pending
source* -- its path and the identity (inode, mtime, size) of what was read --
and the host is asked for its version id (``prov_resolve_path``) only when a
tag is actually needed: when tagged data is written out, or ``get_tags`` is
called. A Cell that reads 2,000 files and writes nothing makes no RPC at
all; the reference made one per ``open``. A source whose file changed since
it was read is dropped rather than attributed to a version it was not.

Only opens made by Cell code (a frame compiled from ``<kernel:N>``) are
tagged (see ``provenance_files``); libraries keep the plain builtin.

The modules form a DAG: ``provenance_tags`` (the store) is the leaf;
``provenance_files`` (the ``open`` wrapper) and ``lineage_hooks``
(numpy/pandas/matplotlib) use it; this module installs both and is the
API Cells import (``openai4s.kernel.provenance`` is this module).
"""

import builtins
import os
import sys

from openai4s.kernel.runtime import import_watch, lineage_hooks, provenance_files
from openai4s.kernel.runtime.provenance_tags import (  # noqa: F401  (the API)
    TaggedBytes,
    TaggedStr,
    current_cwd,
    cwd_changed,
    get_tags,
    is_off,
    merge_tags,
    propagate,
    record_write,
    set_cell_id,
    set_tags,
    state,
    tag_read_result,
    track_cwd,
)

PROVENANCE_VERSION = "1"

__all__ = [
    "PROVENANCE_VERSION",
    "get_tags",
    "set_tags",
    "merge_tags",
    "record_write",
    "tag_read_result",
    "set_cell_id",
    "track_cwd",
    "cwd_changed",
    "current_cwd",
    "install",
    "uninstall",
]


def _make_loads(real_loads):
    def loads(s, *args, **kwargs):
        result = real_loads(s, *args, **kwargs)
        if type(s) is TaggedStr or type(s) is TaggedBytes:
            propagate(result, s)
        return result

    loads.__doc__ = real_loads.__doc__
    loads._openai4s_wrapped = real_loads
    return loads


def _wrap_json_loads(json) -> None:
    # json is wrapped when a Cell (or a library) first imports it, not at
    # install: the worker itself never imports json (see wire_json).
    if getattr(json.loads, "_openai4s_wrapped", None) is None:
        state.real_loads = json.loads
        json.loads = _make_loads(json.loads)


def _unwrap_json_loads() -> None:
    import_watch.forget("json", _wrap_json_loads)
    json = sys.modules.get("json")
    if json is not None and state.real_loads is not None:
        if getattr(json.loads, "_openai4s_wrapped", None) is state.real_loads:
            json.loads = state.real_loads
    state.real_loads = None


def install(host_call) -> None:
    """Install the hooks once; every call updates the RPC callable."""
    state.host_call = host_call
    if state.installed:
        return
    state.root = os.getcwd()
    state.real_open = builtins.open
    builtins.open = provenance_files.make_open(builtins.open, is_off)
    import_watch.when_imported("json", _wrap_json_loads)

    lineage_hooks.install()
    state.installed = True


def uninstall() -> None:
    if not state.installed:
        return
    builtins.open = state.real_open
    _unwrap_json_loads()
    lineage_hooks.uninstall()
    state.installed = False
    state.host_call = None
    state.resolved = {}
