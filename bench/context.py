"""State shared by the metrics of one run: the profile, a scratch workspace,
and one warm kernel per system that is kept across metrics and rounds (a
metric that may have damaged it discards it and the next user gets a new
one). Every kernel started through here is closed by close()."""

import os

from bench import systems

# Cells a fresh kernel runs before any warm measurement, so first-cell costs
# (lazy imports, code caches) are not charged to the warm metrics.
_WARM_UP_CELLS = ("pass",) * 3 + ("x = 1", "print('warm')", "1+1")


class BenchContext:
    def __init__(self, profile, workspace, log):
        self.profile = profile
        self.workspace = workspace
        self.log = log
        self.cell_cwd = os.path.join(workspace, "cells")
        os.makedirs(self.cell_cwd, exist_ok=True)
        self._warm = {}

    def warm(self, system):
        session = self._warm.get(system)
        if session is None:
            session = systems.start(system, self.cell_cwd)
            self._warm[system] = session
            for code in _WARM_UP_CELLS:
                result = session.execute(code)
                if result.error:
                    self.discard(system)
                    raise RuntimeError(f"{system} warm-up cell {code!r} failed: {result.error}")
        return session

    def discard(self, system):
        session = self._warm.pop(system, None)
        if session is not None:
            session.close()

    def close(self):
        for system in list(self._warm):
            self.discard(system)
