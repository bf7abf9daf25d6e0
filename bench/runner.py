"""One run: every metric family, every round, systems alternating.

Within a round each family measures each of its systems once; the order of
the systems flips every round so neither always runs first (warmer caches,
a quieter machine). A failure is recorded against its family and system and
the run goes on; every kernel is closed however the run ends.
"""

import shutil
import tempfile
import time
import traceback

from bench.context import BenchContext
from bench.metrics import FAMILIES


class Samples:
    """row key -> system -> [samples], and the failures met on the way."""

    def __init__(self):
        self.values = {}
        self.errors = []

    def add(self, found, system):
        for key, samples in found.items():
            self.values.setdefault(key, {}).setdefault(system, []).extend(samples)

    def fail(self, family, system, where, exc):
        self.errors.append(
            {
                "family": family,
                "system": system,
                "where": where,
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(),
            }
        )


def select(only):
    if not only:
        return FAMILIES
    unknown = set(only) - {family.NAME for family in FAMILIES}
    if unknown:
        raise SystemExit(f"unknown metric families: {', '.join(sorted(unknown))}")
    return tuple(family for family in FAMILIES if family.NAME in only)


def _order(family, round_index):
    return family.SYSTEMS if round_index % 2 == 0 else tuple(reversed(family.SYSTEMS))


def _measure(family, ctx, system, warmed):
    if hasattr(family, "warm_up") and (family.NAME, system) not in warmed:
        family.warm_up(ctx, system)
        warmed.add((family.NAME, system))
    return family.measure(ctx, system)


def run(profile, families, log):
    samples = Samples()
    workspace = tempfile.mkdtemp(prefix="o4s-bench-")
    ctx = BenchContext(profile, workspace, log)
    started = time.monotonic()
    try:
        ready, warmed = [], set()
        for family in families:
            try:
                if hasattr(family, "setup"):
                    log(f"setup {family.NAME}")
                    family.setup(ctx)
                ready.append(family)
            except Exception as exc:
                log(f"  setup {family.NAME} failed: {exc}")
                samples.fail(family.NAME, None, "setup", exc)
        for round_index in range(profile.rounds):
            for family in ready:
                rounds = family.rounds(profile) if hasattr(family, "rounds") else profile.rounds
                if round_index >= rounds:
                    continue
                for system in _order(family, round_index):
                    log(f"round {round_index + 1}/{profile.rounds} {family.NAME} {system}")
                    try:
                        samples.add(_measure(family, ctx, system, warmed), system)
                    except Exception as exc:
                        log(f"  {family.NAME} {system} failed: {type(exc).__name__}: {exc}")
                        samples.fail(family.NAME, system, f"round {round_index + 1}", exc)
                        # The warm kernel may be in any state now.
                        ctx.discard(system)
    finally:
        ctx.close()
        shutil.rmtree(workspace, ignore_errors=True)
    return samples, time.monotonic() - started
