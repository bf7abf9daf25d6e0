"""Cross-Cell leak probes: figures left open, process state a Cell changed.

Probes only read modules that are already imported. Importing matplotlib
builds its font list -- under an enforced sandbox with an empty private
cache that was 8-48 s on the first Cell of every kernel -- so a process that
has not imported pyplot simply has no figures.
"""

import os
import sys


def guards_disabled() -> bool:
    return os.environ.get("OPENAI4S_GUARDS_OFF") == "1"


def _figure_numbers():
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return None
    return set(pyplot.get_fignums())


def _environ_snapshot():
    # The raw bytes mapping behind os.environ copies and compares at C speed;
    # decoding every name and value (dict(os.environ)) cost tens of
    # microseconds per Cell, on every Cell, for a report that is almost
    # always empty.
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else dict(os.environ)


def _decoded(environ):
    decode = getattr(os.environ, "decodevalue", None)
    if decode is None or not environ or isinstance(next(iter(environ)), str):
        return environ
    return {decode(k): decode(v) for k, v in environ.items()}


def _warnings_filters():
    warnings = sys.modules.get("warnings")
    return None if warnings is None else list(warnings.filters)


class CellGuards:
    """Snapshot before a Cell, report after it. Never raises."""

    # The host-side artifact layer saves and closes unsaved figures after
    # the response; closing them here would destroy them first.
    autoclose_figures = False

    def __init__(self) -> None:
        self._active = False

    def before_cell(self) -> None:
        self._active = False
        if guards_disabled():
            return
        try:
            self._figures = _figure_numbers()
            self._environ = _environ_snapshot()
            self._filters = _warnings_filters()
            self._active = True
        except Exception:
            self._active = False

    def after_cell(self) -> dict:
        if not self._active:
            return {}
        self._active = False
        try:
            report = {}
            figures = self._figure_report()
            if figures:
                report["matplotlib"] = figures
            isolation = self._isolation_report()
            if isolation:
                report["isolation"] = isolation
            return report
        except Exception:
            return {}

    def _figure_report(self) -> dict:
        after = _figure_numbers()
        if after is None:
            return {}
        before = self._figures or set()
        leaked = sorted(after - before)
        closed = sorted(before - after)
        if not leaked and not closed:
            return {}
        return {"leaked": leaked, "closed": closed}

    def _isolation_report(self) -> dict:
        report = {}
        now = _environ_snapshot()
        if now != self._environ:
            before, after = _decoded(self._environ), _decoded(now)
            changed = {k: v for k, v in after.items() if before.get(k) != v}
            removed = sorted(k for k in before if k not in after)
            report["environ"] = {"added_or_changed": changed, "removed": removed}
        filters = _warnings_filters()
        if filters is not None and filters != self._filters:
            report["warnings_filters"] = "mutated"
        return report
