"""Median and p90 of samples (p90 by nearest rank: an observed value)."""

import math
import statistics

from bench.rows import RATE


def summarize(kind, samples):
    if not samples:
        return None
    if kind == RATE:
        percent = 100.0 * sum(samples) / len(samples)
        return {"median": percent, "p90": percent, "n": len(samples)}
    ordered = sorted(samples)
    p90 = ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]
    return {"median": statistics.median(ordered), "p90": p90, "n": len(ordered)}
