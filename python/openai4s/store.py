"""The SQLite store, one per database file (the C++ `_core.Store`).

`Store._conn` is a real `sqlite3` connection to the same file, for callers
that read tables directly; every write goes through the C++ store, which
commits each operation immediately.
"""

import os
import sqlite3
import threading

from openai4s import _core

#: resolved database path -> Store (one per file per process).
_STORES = {}
_STORES_LOCK = threading.Lock()


class Store:
    def __init__(self, path):
        self.path = os.path.realpath(os.fspath(path))
        self._core = _core.Store.open(self.path)
        self._conn = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
        self._closed = False

    def new_frame(self, **frame):
        return self._core.new_frame(**frame)

    def get_frame(self, frame_id):
        return self._core.get_frame(frame_id)

    def resolve_frame_scope(self, frame_id, fallback_project="default"):
        return self._core.resolve_frame_scope(frame_id, fallback_project)

    def set_permission_rule(self, *, scope, scope_id="", tool, pattern="*", decision):
        return self._core.set_permission_rule(
            scope=scope, scope_id=scope_id, tool=tool, pattern=pattern, decision=decision
        )

    def delete_permission_rule(self, rule_id):
        self._core.delete_permission_rule(rule_id)

    def seed_default_permission_rules(self, force=False):
        self._core.seed_default_permission_rules(force)

    def log_host_call(self, *, method, args, ok, frame_id=None, result=None):
        self._core.log_host_call(method=method, args=args, ok=ok, frame_id=frame_id, result=result)

    @property
    def closed(self):
        return self._closed

    def close(self):
        with _STORES_LOCK:
            if _STORES.get(self.path) is self:
                del _STORES[self.path]
        if not self._closed:
            self._closed = True
            self._conn.close()


def get_store(path):
    """The cached Store for `path`, opened (and migrated) on first use."""
    key = os.path.realpath(os.fspath(path))
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None or store.closed:
            store = Store(key)
            _STORES[key] = store
        return store
